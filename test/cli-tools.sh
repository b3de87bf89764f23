#!/bin/bash
# cli-tools.sh - tools/demo.sh is never silent for long: a line per step
# and the build's progress (every 10%), and a failed build shows the end of
# its log and exits 1. Run in a copy of the script with stand-ins for
# cmake, the packages step and the programs, so no real build happens.
source "$(dirname "$0")/read-lib.sh"

W=$WORK
mkdir -p "$W/repo/tools" "$W/repo/build" "$W/bin"
cp "$KSCOPE_SOURCE_DIR/tools/demo.sh" "$W/repo/tools/"
printf '#!/bin/sh\necho "packages: all there"\n' >"$W/repo/tools/setup-deps.sh"
printf '#!/bin/sh\necho "kscope $*"\n' >"$W/repo/build/kscope"
printf '#!/bin/sh\necho "example $*"\n' >"$W/repo/build/example"
# cmake: configuring prints nothing; building prints make's progress lines
# (or fails half way when FAIL_BUILD is set)
cat >"$W/bin/cmake" <<'EOF'
#!/bin/sh
[ "$1" = --build ] || exit 0
for p in 0 3 9 10 27 45 50 51 88 99 100; do
    printf '[%3d%%] Building C object src/x%d.c.o\n' "$p" "$p"
    if [ -n "${FAIL_BUILD:-}" ] && [ $p = 50 ]; then echo "src/x.c:1: error: broken"; exit 2; fi
done
EOF
chmod +x "$W/repo/tools/setup-deps.sh" "$W/repo/build/kscope" "$W/repo/build/example" "$W/bin/cmake"

rc=0
PATH=$W/bin:$PATH bash "$W/repo/tools/demo.sh" >"$W/out" 2>&1 || rc=$?
steps=$(grep -c '^demo.sh: \[[1-4]/4\] ' "$W/out")
progress=$(grep '^demo.sh: building: ' "$W/out" | sed 's/.*: //' | tr '\n' ' ')
[ $rc = 0 ] && [ "$steps" = 4 ] && [ "$progress" = "0% 10% 27% 45% 50% 88% 99% 100% " ] &&
    grep -q '^kscope view' "$W/out" && ! grep -q 'Building C object' "$W/out" &&
    ok "demo.sh: 4 step lines, the build's progress every 10%: $progress" ||
    fail "demo.sh: exit $rc, $steps steps, progress '$progress': $(cat "$W/out")"

rc=0
FAIL_BUILD=1 PATH=$W/bin:$PATH bash "$W/repo/tools/demo.sh" >"$W/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'src/x.c:1: error: broken' "$W/out" &&
    grep -q '^demo.sh: the build failed (whole log: build/demo-build.log)' "$W/out" &&
    ! grep -q '^kscope' "$W/out" && ok "demo.sh: a failed build shows its log's end, exit 1" ||
    fail "demo.sh, failed build: exit $rc: $(cat "$W/out")"
finish
