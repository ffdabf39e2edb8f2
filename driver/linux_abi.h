/* driver/linux_abi.h: the riscv64 Linux user ABI as the guest sees it:
 * system call numbers the shim implements, errno values, flag bits and
 * structure layouts (asm-generic, LP64). Facts of the ABI, spelled with an
 * LX_ prefix so that they never mix with the host's own definitions. */
#ifndef RNR_DRIVER_LINUX_ABI_H
#define RNR_DRIVER_LINUX_ABI_H

#include <stdint.h>

#define LX_PAGE_SIZE 4096u
#define LX_PAGE_MASK ((uint64_t)LX_PAGE_SIZE - 1)

/* errno (asm-generic/errno-base.h, errno.h); system calls return -errno. */
enum {
    LX_EPERM = 1, LX_ENOENT = 2, LX_ESRCH = 3, LX_EINTR = 4, LX_EIO = 5, LX_ENXIO = 6,
    LX_E2BIG = 7, LX_ENOEXEC = 8, LX_EBADF = 9, LX_ECHILD = 10, LX_EAGAIN = 11,
    LX_ENOMEM = 12, LX_EACCES = 13, LX_EFAULT = 14, LX_EBUSY = 16, LX_EEXIST = 17,
    LX_EXDEV = 18, LX_ENODEV = 19, LX_ENOTDIR = 20, LX_EISDIR = 21, LX_EINVAL = 22,
    LX_ENFILE = 23, LX_EMFILE = 24, LX_ENOTTY = 25, LX_EFBIG = 27, LX_ENOSPC = 28,
    LX_ESPIPE = 29, LX_EROFS = 30, LX_EMLINK = 31, LX_EPIPE = 32, LX_ERANGE = 34,
    LX_EDEADLK = 35, LX_ENAMETOOLONG = 36, LX_ENOLCK = 37, LX_ENOSYS = 38, LX_ENOTEMPTY = 39,
    LX_ELOOP = 40, LX_ENODATA = 61, LX_EOVERFLOW = 75, LX_ENOTSUP = 95,
    LX_ETIMEDOUT = 110,
    /* Kernel-internal: the system call is run again (pc back on its ecall)
     * when the blocked thread resumes. The input log keeps it. */
    LX_ERESTARTSYS = 512,
};
#define LX_PIPE_BUF 4096u
/* utimensat: tv_nsec values that mean "now" and "leave it". */
#define LX_UTIME_NOW ((1ll << 30) - 1)
#define LX_UTIME_OMIT ((1ll << 30) - 2)

/* mmap, mprotect, madvise, mremap. */
enum {
    LX_PROT_READ = 0x1, LX_PROT_WRITE = 0x2, LX_PROT_EXEC = 0x4,
    LX_PROT_GROWSDOWN = 0x01000000, LX_PROT_GROWSUP = 0x02000000,
};
enum {
    LX_MAP_SHARED = 0x01, LX_MAP_PRIVATE = 0x02, LX_MAP_SHARED_VALIDATE = 0x03,
    LX_MAP_TYPE = 0x0f, LX_MAP_FIXED = 0x10, LX_MAP_ANONYMOUS = 0x20,
    LX_MAP_GROWSDOWN = 0x0100, LX_MAP_DENYWRITE = 0x0800, LX_MAP_EXECUTABLE = 0x1000,
    LX_MAP_LOCKED = 0x2000, LX_MAP_NORESERVE = 0x4000, LX_MAP_POPULATE = 0x8000,
    LX_MAP_NONBLOCK = 0x10000, LX_MAP_STACK = 0x20000, LX_MAP_HUGETLB = 0x40000,
    LX_MAP_SYNC = 0x80000, LX_MAP_FIXED_NOREPLACE = 0x100000,
};
enum {
    LX_MADV_NORMAL = 0, LX_MADV_RANDOM = 1, LX_MADV_SEQUENTIAL = 2, LX_MADV_WILLNEED = 3,
    LX_MADV_DONTNEED = 4, LX_MADV_FREE = 8, LX_MADV_REMOVE = 9, LX_MADV_DONTFORK = 10,
    LX_MADV_DOFORK = 11, LX_MADV_MERGEABLE = 12, LX_MADV_UNMERGEABLE = 13,
    LX_MADV_HUGEPAGE = 14, LX_MADV_NOHUGEPAGE = 15, LX_MADV_DONTDUMP = 16,
    LX_MADV_DODUMP = 17, LX_MADV_WIPEONFORK = 18, LX_MADV_KEEPONFORK = 19,
    LX_MADV_COLD = 20, LX_MADV_PAGEOUT = 21,
};

/* clone flags (linux/sched.h). */
enum {
    LX_CSIGNAL = 0xff,
    LX_CLONE_VM = 0x100, LX_CLONE_FS = 0x200, LX_CLONE_FILES = 0x400,
    LX_CLONE_SIGHAND = 0x800, LX_CLONE_PIDFD = 0x1000, LX_CLONE_PTRACE = 0x2000,
    LX_CLONE_VFORK = 0x4000, LX_CLONE_PARENT = 0x8000, LX_CLONE_THREAD = 0x10000,
    LX_CLONE_NEWNS = 0x20000, LX_CLONE_SYSVSEM = 0x40000, LX_CLONE_SETTLS = 0x80000,
    LX_CLONE_PARENT_SETTID = 0x100000, LX_CLONE_CHILD_CLEARTID = 0x200000,
    LX_CLONE_DETACHED = 0x400000, LX_CLONE_UNTRACED = 0x800000,
    LX_CLONE_CHILD_SETTID = 0x1000000,
};
/* What glibc's pthread_create passes; the only clone the shim accepts. */
#define LX_CLONE_THREAD_FLAGS                                                            \
    (LX_CLONE_VM | LX_CLONE_FS | LX_CLONE_FILES | LX_CLONE_SIGHAND | LX_CLONE_THREAD |   \
     LX_CLONE_SYSVSEM | LX_CLONE_SETTLS | LX_CLONE_PARENT_SETTID | LX_CLONE_CHILD_CLEARTID)

/* futex (linux/futex.h). */
enum {
    LX_FUTEX_WAIT = 0, LX_FUTEX_WAKE = 1, LX_FUTEX_FD = 2, LX_FUTEX_REQUEUE = 3,
    LX_FUTEX_CMP_REQUEUE = 4, LX_FUTEX_WAKE_OP = 5, LX_FUTEX_LOCK_PI = 6,
    LX_FUTEX_UNLOCK_PI = 7, LX_FUTEX_TRYLOCK_PI = 8, LX_FUTEX_WAIT_BITSET = 9,
    LX_FUTEX_WAKE_BITSET = 10, LX_FUTEX_WAIT_REQUEUE_PI = 11, LX_FUTEX_CMP_REQUEUE_PI = 12,
    LX_FUTEX_LOCK_PI2 = 13,
    LX_FUTEX_PRIVATE_FLAG = 128, LX_FUTEX_CLOCK_REALTIME = 256,
    LX_FUTEX_CMD_MASK = ~(128 | 256),
};
#define LX_FUTEX_BITSET_MATCH_ANY 0xffffffffu
/* The futex word of a robust mutex: owner tid and two flags. */
#define LX_FUTEX_WAITERS 0x80000000u
#define LX_FUTEX_OWNER_DIED 0x40000000u
#define LX_FUTEX_TID_MASK 0x3fffffffu
#define LX_ROBUST_LIST_LIMIT 2048

/* Clocks (linux/time.h). */
enum {
    LX_CLOCK_REALTIME = 0, LX_CLOCK_MONOTONIC = 1, LX_CLOCK_PROCESS_CPUTIME_ID = 2,
    LX_CLOCK_THREAD_CPUTIME_ID = 3, LX_CLOCK_MONOTONIC_RAW = 4,
    LX_CLOCK_REALTIME_COARSE = 5, LX_CLOCK_MONOTONIC_COARSE = 6, LX_CLOCK_BOOTTIME = 7,
};
#define LX_TIMER_ABSTIME 1

/* open, fcntl, *at (asm-generic/fcntl.h, linux/fcntl.h). */
enum {
    LX_O_ACCMODE = 03, LX_O_RDONLY = 0, LX_O_WRONLY = 01, LX_O_RDWR = 02,
    LX_O_CREAT = 0100, LX_O_EXCL = 0200, LX_O_NOCTTY = 0400, LX_O_TRUNC = 01000,
    LX_O_APPEND = 02000, LX_O_NONBLOCK = 04000, LX_O_DSYNC = 010000, LX_O_DIRECT = 040000,
    LX_O_LARGEFILE = 0100000, LX_O_DIRECTORY = 0200000, LX_O_NOFOLLOW = 0400000,
    LX_O_NOATIME = 01000000, LX_O_CLOEXEC = 02000000, LX_O_SYNC = 04010000,
    LX_O_PATH = 010000000, LX_O_TMPFILE = 020200000,
};
enum {
    LX_F_DUPFD = 0, LX_F_GETFD = 1, LX_F_SETFD = 2, LX_F_GETFL = 3, LX_F_SETFL = 4,
    LX_F_GETLK = 5, LX_F_SETLK = 6, LX_F_SETLKW = 7, LX_F_DUPFD_CLOEXEC = 1030,
    LX_FD_CLOEXEC = 1,
};
#define LX_AT_FDCWD (-100)
enum {
    LX_AT_SYMLINK_NOFOLLOW = 0x100, LX_AT_EACCESS = 0x200, LX_AT_REMOVEDIR = 0x200,
    LX_AT_SYMLINK_FOLLOW = 0x400, LX_AT_NO_AUTOMOUNT = 0x800, LX_AT_EMPTY_PATH = 0x1000,
};
enum { LX_SEEK_SET = 0, LX_SEEK_CUR = 1, LX_SEEK_END = 2, LX_SEEK_DATA = 3, LX_SEEK_HOLE = 4 };
enum { LX_F_OK = 0, LX_X_OK = 1, LX_W_OK = 2, LX_R_OK = 4 };

/* ioctl requests the shim knows (asm-generic/ioctls.h). */
enum { LX_TCGETS = 0x5401, LX_TIOCGWINSZ = 0x5413, LX_FIONREAD = 0x541b };

/* Signals (asm-generic/signal.h) and sigaction handler values. */
enum {
    LX_SIGHUP = 1, LX_SIGINT = 2, LX_SIGQUIT = 3, LX_SIGILL = 4, LX_SIGTRAP = 5,
    LX_SIGABRT = 6, LX_SIGBUS = 7, LX_SIGFPE = 8, LX_SIGKILL = 9, LX_SIGUSR1 = 10,
    LX_SIGSEGV = 11, LX_SIGUSR2 = 12, LX_SIGPIPE = 13, LX_SIGALRM = 14, LX_SIGTERM = 15,
    LX_SIGSTKFLT = 16, LX_SIGCHLD = 17, LX_SIGCONT = 18, LX_SIGSTOP = 19, LX_SIGTSTP = 20,
    LX_SIGTTIN = 21, LX_SIGTTOU = 22, LX_SIGURG = 23, LX_SIGXCPU = 24, LX_SIGXFSZ = 25,
    LX_SIGVTALRM = 26, LX_SIGPROF = 27, LX_SIGWINCH = 28, LX_SIGIO = 29, LX_SIGPWR = 30,
    LX_SIGSYS = 31, LX_NSIG = 64,
};

#define LX_SIGCANCEL 32          /* glibc's own: pthread_cancel */

enum { LX_ITIMER_REAL = 0, LX_ITIMER_VIRTUAL = 1, LX_ITIMER_PROF = 2 };
#define LX_ITIMERVAL_SIZE 32      /* it_interval, it_value: {tv_sec, tv_usec} */
#define LX_SIG_DFL 0u
#define LX_SIG_IGN 1u
enum { LX_SIG_BLOCK = 0, LX_SIG_UNBLOCK = 1, LX_SIG_SETMASK = 2 };
enum { LX_SS_ONSTACK = 1, LX_SS_DISABLE = 2 };
/* sigaction flags and siginfo codes the handlers' frames use. */
#define LX_SA_SIGINFO 0x4u
#define LX_SA_ONSTACK 0x08000000u
#define LX_SA_RESTART 0x10000000u
#define LX_SA_NODEFER 0x40000000u
#define LX_SA_RESETHAND 0x80000000u
enum { LX_SI_USER = 0, LX_SI_TKILL = -6, LX_SI_KERNEL = 0x80 };
enum { LX_CLD_EXITED = 1, LX_CLD_KILLED = 2 };   /* SIGCHLD's si_code */
#define LX_MINSIGSTKSZ 2048u

/* getrandom flags. */
enum { LX_GRND_NONBLOCK = 1, LX_GRND_RANDOM = 2, LX_GRND_INSECURE = 4 };

/* prlimit64 resources. */
enum {
    LX_RLIMIT_CPU = 0, LX_RLIMIT_FSIZE = 1, LX_RLIMIT_DATA = 2, LX_RLIMIT_STACK = 3,
    LX_RLIMIT_CORE = 4, LX_RLIMIT_RSS = 5, LX_RLIMIT_NPROC = 6, LX_RLIMIT_NOFILE = 7,
    LX_RLIMIT_MEMLOCK = 8, LX_RLIMIT_AS = 9, LX_RLIM_NLIMITS = 16,
};
#define LX_RLIM_INFINITY (~(uint64_t)0)

/* membarrier commands. */
enum {
    LX_MEMBARRIER_CMD_QUERY = 0, LX_MEMBARRIER_CMD_GLOBAL = 1,
    LX_MEMBARRIER_CMD_PRIVATE_EXPEDITED = 8, LX_MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED = 16,
};

/* Auxiliary vector keys (linux/auxvec.h). RISC-V defines no AT_PLATFORM
 * (its ELF_PLATFORM is NULL) and the shim provides no vDSO. */
enum {
    LX_AT_NULL = 0, LX_AT_IGNORE = 1, LX_AT_EXECFD = 2, LX_AT_PHDR = 3, LX_AT_PHENT = 4,
    LX_AT_PHNUM = 5, LX_AT_PAGESZ = 6, LX_AT_BASE = 7, LX_AT_FLAGS = 8, LX_AT_ENTRY = 9,
    LX_AT_NOTELF = 10, LX_AT_UID = 11, LX_AT_EUID = 12, LX_AT_GID = 13, LX_AT_EGID = 14,
    LX_AT_PLATFORM = 15, LX_AT_HWCAP = 16, LX_AT_CLKTCK = 17, LX_AT_SECURE = 23,
    LX_AT_BASE_PLATFORM = 24, LX_AT_RANDOM = 25, LX_AT_HWCAP2 = 26, LX_AT_EXECFN = 31,
    LX_AT_SYSINFO_EHDR = 33,
};
/* AT_HWCAP on RISC-V: bit (letter - 'a') per single-letter extension. */
#define LX_HWCAP_ISA(letter) (1ull << ((letter) - 'a'))
#define LX_HWCAP_RV64IMAFDC                                                          \
    (LX_HWCAP_ISA('i') | LX_HWCAP_ISA('m') | LX_HWCAP_ISA('a') | LX_HWCAP_ISA('f') | \
     LX_HWCAP_ISA('d') | LX_HWCAP_ISA('c'))

/* struct stat (asm-generic/stat.h, 64-bit): 128 bytes. */
#define LX_STAT_SIZE 128u
enum {
    LX_STAT_DEV = 0, LX_STAT_INO = 8, LX_STAT_MODE = 16, LX_STAT_NLINK = 20, LX_STAT_UID = 24,
    LX_STAT_GID = 28, LX_STAT_RDEV = 32, LX_STAT_SIZE_OFF = 48, LX_STAT_BLKSIZE = 56,
    LX_STAT_BLOCKS = 64, LX_STAT_ATIME = 72, LX_STAT_MTIME = 88, LX_STAT_CTIME = 104,
};
/* struct new_utsname: six fields of 65 bytes. */
#define LX_UTS_FIELD 65u
#define LX_UTSNAME_SIZE (6u * LX_UTS_FIELD)

#endif
