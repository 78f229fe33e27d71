#!/bin/sh
# loopback-serve.sh: the loopback server program serves a directory of
# replies round robin, in the byte order of the file names: each NAME.cu as
# a kernel wrapped in a reply, each NAME.md as the whole reply a model
# wrote, with @SEQ@ replaced by the reply's number (from 0)
# (tests/data/llm-variants-styles, which bench/llm-search.sh serves too);
# with --batch-looks N, a batch is in progress at its first N looks.
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

# --batch-looks N: a batch is in progress at its first N looks
proc = subprocess.Popen([serve, "--batch-looks", "2", variants],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
url = proc.stdout.readline().strip()
def call(path, body=None):
    req = urllib.request.Request(
        url + path, data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json", "anthropic-version": "2023-06-01"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)
b = call("/v1/messages/batches", {"requests": [{"custom_id": "a", "params": {
    "model": "loopback", "max_tokens": 100,
    "messages": [{"role": "user", "content": "go"}]}}]})
looks = [call("/v1/messages/batches/" + b["id"])["processing_status"] for _ in range(3)]
ok(looks == ["in_progress", "in_progress", "ended"],
   "--batch-looks 2: a batch is in progress at two looks, then ended (%s)" % looks)
proc.send_signal(signal.SIGTERM)
proc.wait(timeout=10)
err = proc.stderr.read()
ok(proc.returncode == 0 and "1 batches created" in err,
   "... and the server counts it (%s)" % err.strip().replace("\n", "; "))
bad = subprocess.run([serve, "--batch-looks", "x", variants], capture_output=True, text=True)
ok(bad.returncode == 2 and "--batch-looks: 'x' is not a number of looks" in bad.stderr,
   "--batch-looks x: refused with status 2, naming the value")
print("1..%d" % n)
PY
