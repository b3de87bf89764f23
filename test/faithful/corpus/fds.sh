#!/usr/bin/env bash
# fds.sh - a shell script that uses descriptors 3 to 9 across subshells,
# command substitution, here-documents and a process substitution (run
# bare and under kscope run by test/faithful/corpus.py).
set -u
exec 3>out3.txt 4>&1 5<<'END'
a line from a here-document on fd 5
END
exec 6>out6.txt 7>&2
for i in 1 2 3; do (echo "subshell $i writes to fd 3" >&3); done
x=$(echo "fd 4 is stdout, even inside \$( )" >&4; echo captured)
echo "captured: $x"
read -r line <&5
echo "fd 5: $line"
{ echo "a group writes to fd 6"; (echo "a nested subshell writes to fd 6"); } >&6
echo "fd 7 is stderr" >&7
exec 8<out3.txt
while read -r l <&8; do echo "fd 8 reads: $l"; done
exec 9> >(tr a-z A-Z >upper.txt)
echo "through a process substitution on fd 9" >&9
exec 9>&-
wait $!
(exec 3>&-; echo "fd 3 closed in a subshell" >&3 2>/dev/null || echo "the subshell cannot write fd 3")
echo "fd 3 is still open in the script" >&3
y=$( (echo "a subshell in a substitution writes fd 6" >&6; echo inner) )
echo "inner: $y"
for fd in 3 4 5 6 7 8 9; do
    if { true >&$fd; } 2>/dev/null || { true <&$fd; } 2>/dev/null; then
        echo "fd $fd open"
    else
        echo "fd $fd closed"
    fi
done
cat out3.txt out6.txt upper.txt
