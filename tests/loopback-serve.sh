#!/bin/sh
# loopback-serve.sh: the loopback server program serves a directory of
# replies round robin, in the byte order of the file names: each NAME.cu as
# a kernel wrapped in a reply, each NAME.md as the whole reply a model
# wrote, with @SEQ@ replaced by the reply's number (from 0)
# (tests/data/llm-variants-styles, which bench/llm-search.sh serves too).
# Skipped without python3.
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not found"; exit 77; }
exec python3 - "$builddir/tests/loopback-serve" \
  "$srcdir/tests/data/llm-variants-styles" <<'PY'
import json, os, signal, subprocess, sys, urllib.request

serve, variants = sys.argv[1], sys.argv[2]
proc = subprocess.Popen([serve, variants], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
url = proc.stdout.readline().strip()
if not url.startswith("http://127.0.0.1:"):
    print("Bail out! loopback-serve did not start: " + proc.stderr.read())
    sys.exit(1)
files = sorted(f for f in os.listdir(variants) if f.endswith((".cu", ".md")))
n = 0
def ok(cond, name):
    global n
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, name))

def ask():
    body = json.dumps({"model": "loopback", "stream": False,
                       "messages": [{"role": "user", "content": "go"}]})
    req = urllib.request.Request(url + "/v1/chat/completions",
                                 data=body.encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)["choices"][0]["message"]["content"]

for i, name in enumerate(files + files[:1]):
    text = ask()
    src = open(os.path.join(variants, name)).read()
    if name.endswith(".md"):
        ok(text == src.replace("@SEQ@", str(i)),
           "reply %d is %s as written, @SEQ@ numbered" % (i + 1, name))
    else:
        ok("```cuda\n" in text and src.strip() in text,
           "reply %d is %s in a fence" % (i + 1, name))
proc.send_signal(signal.SIGTERM)
proc.wait(timeout=10)
ok(proc.returncode == 0, "loopback-serve exits 0 on SIGTERM")
print("1..%d" % n)
PY
