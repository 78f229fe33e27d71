#!/usr/bin/env python3
"""files-replay.py: answers the llm operator's files transport from a fixed
list of replies, as tests/loopback-serve answers HTTP requests.

    python3 bench/files-replay.py DIR REPLIES

DIR is the transport's directory (kevo-llm(7), THE FILES TRANSPORT). For
every DIR/pending/NNNNNN.json that has no DIR/done/NNNNNN.json, it writes
the body the vendor's endpoint would return (a chat completion for
"openai" in the sidecar's api, a message for "anthropic"), under a
temporary name and then renamed, holding reply text number NNNNNN - 1,
round robin over the texts of REPLIES, which it reads as loopback-serve
does: every NAME.cu is the kernel in a ```cuda block with a first line
"// reply SEQ", every NAME.md a whole reply with @SEQ@ replaced, in the
byte order of the file names, SEQ being the request's index from 0. So a
search answered through files gets, request for request, the replies the
same search gets from `loopback-serve REPLIES` over HTTP. It prints one
line per reply written and exits 0; 1 when DIR or REPLIES cannot be read,
or when a request or its sidecar cannot be read (that request is left
unanswered, named on stderr, and the others are answered).
"""
import json
import os
import sys


def texts(replies):
    out = []
    for name in sorted(os.listdir(replies)):
        path = os.path.join(replies, name)
        stem, ext = os.path.splitext(name)
        if ext not in (".cu", ".md"):
            continue
        with open(path, "rb") as f:
            body = f.read().decode("utf-8")
        if ext == ".cu":
            nl = "" if body.endswith("\n") or not body else "\n"
            body = "Here is a rewritten kernel (%s).\n\n```cuda\n// reply @SEQ@\n%s%s```\n" % (
                name, body, nl)
        out.append(body)
    return out


def vendor_body(api, model, text, prompt_chars, number):
    out_tokens = max(1, len(text) // 4)
    in_tokens = max(1, prompt_chars // 4)
    if api == "anthropic":
        return {"id": "msg_files_%06d" % number, "type": "message", "role": "assistant",
                "model": model, "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": in_tokens, "output_tokens": out_tokens}}
    return {"id": "chatcmpl-files-%06d" % number, "object": "chat.completion",
            "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": in_tokens, "completion_tokens": out_tokens,
                      "total_tokens": in_tokens + out_tokens}}


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    d, replies = sys.argv[1], sys.argv[2]
    try:
        pool = texts(replies)
        pending = sorted(n for n in os.listdir(os.path.join(d, "pending"))
                         if n.endswith(".json") and not n.endswith(".meta.json"))
    except OSError as e:
        print("files-replay.py: %s" % e, file=sys.stderr)
        return 1
    if not pool:
        print("files-replay.py: %s holds no .cu or .md reply" % replies, file=sys.stderr)
        return 1
    os.makedirs(os.path.join(d, "done"), exist_ok=True)
    status = 0
    for name in pending:
        done = os.path.join(d, "done", name)
        if os.path.exists(done):
            continue
        number = int(name[:-5])
        meta_path = os.path.join(d, "pending", name[:-5] + ".meta.json")
        try:
            with open(meta_path) as f:
                meta = json.load(f)
            with open(os.path.join(d, "pending", name)) as f:
                prompt_chars = len(f.read())
        except (OSError, ValueError) as e:
            # one broken request is left unanswered; the others go on
            print("files-replay.py: %s: %s: left unanswered" % (meta_path, e),
                  file=sys.stderr)
            status = 1
            continue
        seq = number - 1
        text = pool[seq % len(pool)].replace("@SEQ@", str(seq))
        body = vendor_body(meta.get("api", "openai"), meta.get("model", "?"), text,
                           prompt_chars, number)
        tmp = done + ".tmp"
        with open(tmp, "w") as f:
            json.dump(body, f)
        os.rename(tmp, done)
        print("done/%s: reply %d of %s" % (name, seq % len(pool) + 1, replies))
    return status


if __name__ == "__main__":
    sys.exit(main())
