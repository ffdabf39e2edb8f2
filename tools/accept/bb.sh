# tools/accept/bb.sh: the script tools/accept-busybox runs under BusyBox's
# sh: every line starts processes (pipelines, subshells, substitutions, a
# background job), and what it prints depends on no pid or time.
echo "pipeline: $(echo hello | tr a-z A-Z)"
sort in.txt | uniq -c | sed 's/^ *//'
seq 1 2000 | grep 7 | wc -l
echo "sum: $(( $(seq 1 100 | xargs | tr " " "+") ))"
( echo sub; echo shell ) | cat | head -n 1
false; echo "false gives $?"
sh -c 'exit 3'; echo "a child shell exits $?"
seq 1 5 | while read n; do echo "line $n"; done | tail -n 2
seq 1 3000 >big.txt &
wait $!
echo "background job wrote $(wc -l <big.txt) lines"
cat <<END | cut -d: -f2
a:here
b:document
END
for w in one two three; do echo "$w" | wc -c; done | sort -n | uniq | tr '\n' ' '
echo
rm -f big.txt
