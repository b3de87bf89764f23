# cli-monitor-pids.sh - `kscope pids --port`: a real server on a loopback
# port (IPv4 and IPv6) is found with its child; bad ports are refused.
. "$KSCOPE_SOURCE_DIR/test/monitor-lib.sh"

for family in 4 6; do
    if [ "$family" = 6 ] && ! "$PY" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
        skip "IPv6 (no IPv6 loopback here)"
        continue
    fi
    start_server "$family" "$WORK/server$family" || { fail "IPv$family server did not start"; continue; }
    read -r port server child <"$WORK/server$family"
    expect_rc 0 "pids --port on an IPv$family listener" "$KS" pids --port "$port"
    if grep -qx "$server" "$WORK/out" && grep -qx "$child" "$WORK/out"; then
        ok "IPv$family: server $server and its child $child listed"
    else
        fail "IPv$family: expected $server and $child, got: $(tr '\n' ' ' <"$WORK/out")"
    fi
    if sort -n -c "$WORK/out" 2>/dev/null; then ok "PIDs ascending"; else fail "PIDs not sorted"; fi
    expect_rc 0 "pids --port=N form" "$KS" pids "--port=$port"
done

# A port nobody listens on: take one, free it, ask.
free_port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect_rc 1 "pids on a port nobody listens on" "$KS" pids --port "$free_port"
expect_err "no process listens on TCP port $free_port" "says no process listens"

expect_rc 2 "port 0 refused" "$KS" pids --port 0
expect_err "bad port '0' (expected 1..65535)" "names the bad port"
expect_rc 2 "port 70000 refused" "$KS" pids --port 70000
expect_rc 2 "port 'http' refused" "$KS" pids --port http
expect_rc 2 "missing --port" "$KS" pids
expect_err "--port N is required" "says --port is required"
expect_rc 2 "unknown argument" "$KS" pids --pot 80
expect_err "unexpected argument '--pot'" "names the unknown argument"
expect_rc 0 "help" "$KS" help pids
grep -q -- "--port N" "$WORK/out" && ok "help describes --port" || fail "help lacks --port"

finish
