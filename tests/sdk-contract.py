#!/usr/bin/env python3
# sdk-contract.py: the vendors' own clients against the loopback server.
#
#   sdk-contract.py LOOPBACK_SERVE VARIANTS_DIR
#
# Starts the loopback server program (tests/loopback-serve) on a free port
# of 127.0.0.1 and has the official openai and anthropic Python SDKs ask it
# for every kind of reply it serves, whole and streamed: plain text, a
# kernel, reasoning (reasoning_content, reasoning) and thinking blocks
# (with signatures, redacted), null content, replies cut at max_tokens,
# refusals, content filters, context windows exceeded, replies without
# usage, error bodies (vLLM's older one too), errors inside a stream,
# streams cut, unfinished, stalled and trickled; and the request checks
# that OpenAI makes of its reasoning models and Anthropic of extended
# thinking. Each case asserts what the SDK made of the reply: the text,
# the usage, the finish or stop reason, the reasoning or thinking, or the
# exception it raised. That the SDKs read the server's replies as their
# vendors' proves that the server the llm operator is tested against
# speaks the real formats. The batch APIs too: OpenAI's files and batches
# (client.files.create/retrieve/content, client.batches.create/retrieve/
# cancel) and Anthropic's message batches (client.messages.batches.create/
# retrieve/results/cancel), with their results, expired, cancelled and
# failed batches, and errors of single requests. Output: TAP.
import itertools
import json
import signal
import subprocess
import sys

import anthropic
import openai

# The SDKs' HTTP library: httpx, or httpx2 in their newer releases.
try:
    import httpx2 as httpx
except ImportError:
    import httpx

serve, variants = sys.argv[1], sys.argv[2]
proc = subprocess.Popen([serve, variants], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
url = proc.stdout.readline().strip()
if not url.startswith("http://127.0.0.1:"):
    print("Bail out! loopback-serve did not start: " + proc.stderr.read())
    sys.exit(1)
print("# loopback server at " + url)
print("# openai %s, anthropic %s" % (openai.__version__, anthropic.__version__))

count = 0
failed = 0


def check(ok, name, detail=""):
    global count, failed
    count += 1
    if ok:
        print("ok %d - %s" % (count, name))
    else:
        failed += 1
        print("not ok %d - %s" % (count, name))
        for line in str(detail).splitlines():
            print("#   " + line)


keys = itertools.count()


def marker(behaviour):
    return "Improve the kernel. [[kevo-loopback:sdk%d:%s]]" % (
        next(keys), behaviour)


DEFAULT = "Nothing to change here."
oa = openai.OpenAI(base_url=url + "/v1", api_key="sk-contract",
                   max_retries=0, timeout=20)
an = anthropic.Anthropic(base_url=url, api_key="ant-contract",
                         max_retries=0, timeout=20)


def extra(obj, name):
    """A field the SDK's model does not declare (vLLM's reasoning fields)."""
    v = getattr(obj, name, None)
    if v is None and getattr(obj, "model_extra", None):
        v = obj.model_extra.get(name)
    return v


class Reply:
    pass


def oa_ask(behaviour, stream, client=oa, model="gpt-4o-mini", **kw):
    """An OpenAI chat completion, read as the SDK gives it."""
    msgs = [{"role": "system", "content": "You write CUDA."},
            {"role": "user", "content": marker(behaviour)}]
    if "max_completion_tokens" not in kw and "max_tokens" not in kw:
        kw["max_tokens"] = 512
    r = Reply()
    if not stream:
        c = client.chat.completions.create(model=model, messages=msgs, **kw)
        m = c.choices[0].message
        r.text, r.refusal = m.content, m.refusal
        r.reasoning = extra(m, "reasoning_content") or extra(m, "reasoning")
        r.finish, r.usage, r.object = (c.choices[0].finish_reason, c.usage,
                                       c.object)
        return r
    r.text, r.reasoning, r.refusal, r.finish, r.usage = None, "", "", None, None
    r.chunks, r.usage_chunks = 0, 0
    for ch in client.chat.completions.create(
            model=model, messages=msgs, stream=True,
            stream_options={"include_usage": True}, **kw):
        r.object = ch.object
        r.chunks += 1
        if ch.usage is not None:
            r.usage = ch.usage
            r.usage_chunks += 1
            check(ch.choices == [], "openai streamed %s: the usage chunk has "
                  "empty choices" % behaviour)
        for choice in ch.choices:
            d = choice.delta
            if d.content is not None:
                r.text = (r.text or "") + d.content
            if d.refusal is not None:
                r.refusal += d.refusal
            piece = extra(d, "reasoning_content") or extra(d, "reasoning")
            if piece:
                r.reasoning += piece
            if choice.finish_reason:
                r.finish = choice.finish_reason
    return r


def an_ask(behaviour, stream, client=an, **kw):
    """An Anthropic message, read as the SDK gives it; streamed through the
    SDK's own accumulator (messages.stream), which checks the order of the
    events."""
    args = dict(model="claude-loopback-1", max_tokens=kw.pop("max_tokens", 2048),
                system="You write CUDA.",
                messages=[{"role": "user", "content": marker(behaviour)}])
    args.update(kw)
    if not stream:
        return client.messages.create(**args), []
    with client.messages.stream(**args) as s:
        events = [e.type for e in s]
        return s.get_final_message(), events


def blocks(msg, kind):
    return [b for b in msg.content if b.type == kind]


def raises(fn, exc):
    """The exception fn raises, if it is an exc, else None."""
    try:
        fn()
    except exc as e:
        return e
    except Exception as e:  # anything else is reported
        return RuntimeError("raised %s: %s" % (type(e).__name__, e))
    return None


for stream in (False, True):
    how = "streamed" if stream else "whole"

    # ---- OpenAI ------------------------------------------------------------
    r = oa_ask("ok", stream)
    check(r.text == DEFAULT, "openai %s ok: the text" % how, repr(r.text))
    check(r.finish == "stop", "openai %s ok: finish_reason stop" % how, r.finish)
    check(r.usage is not None and r.usage.prompt_tokens > 0 and
          r.usage.completion_tokens > 0 and r.usage.total_tokens ==
          r.usage.prompt_tokens + r.usage.completion_tokens,
          "openai %s ok: the usage" % how, r.usage)
    check(r.object == ("chat.completion.chunk" if stream else "chat.completion"),
          "openai %s ok: the object type" % how, r.object)
    if stream:
        check(r.chunks > 3 and r.usage_chunks == 1,
              "openai streamed: text in chunks, one usage chunk",
              (r.chunks, r.usage_chunks))

    r = oa_ask("saxpy-float4", stream)
    check(r.text is not None and "```cuda" in r.text and "float4" in r.text,
          "openai %s kernel: the kernel's fence" % how, r.text)

    for word, field in (("think", "reasoning_content"),
                        ("reasoning", "reasoning")):
        r = oa_ask(word, stream)
        check(r.text == DEFAULT and "```cuda" not in r.text,
              "openai %s %s: the answer without the reasoning" % (how, word),
              repr(r.text))
        check(r.reasoning and "draft" in r.reasoning and "```cuda" in
              r.reasoning, "openai %s %s: the %s field" % (how, word, field),
              repr(r.reasoning))

    r = oa_ask("nullcontent", stream)
    check(not r.text, "openai %s nullcontent: no content" % how, repr(r.text))
    check(r.reasoning and "<think>" in r.reasoning,
          "openai %s nullcontent: the reasoning" % how, repr(r.reasoning))
    check(r.finish == "length", "openai %s nullcontent: finish_reason length"
          % how, r.finish)
    check(r.usage is not None and r.usage.completion_tokens > 0,
          "openai %s nullcontent: usage counted" % how, r.usage)

    r = oa_ask("length", stream)
    check(r.finish == "length" and r.text and len(r.text) < len(DEFAULT),
          "openai %s length: half the text, finish_reason length" % how,
          (r.finish, r.text))

    r = oa_ask("refusal", stream)
    check(not r.text and r.refusal and "can't help" in r.refusal,
          "openai %s refusal: message.refusal, no content" % how,
          (r.text, r.refusal))

    r = oa_ask("content_filter", stream)
    check(r.finish == "content_filter",
          "openai %s content_filter: finish_reason" % how, r.finish)

    r = oa_ask("nousage", stream)
    check(r.usage is None and r.text == DEFAULT,
          "openai %s nousage: a reply without usage" % how, r.usage)

    r = oa_ask("trickle:5", stream)
    check(r.text == DEFAULT, "openai %s trickle: the whole text" % how, r.text)

    e = raises(lambda: oa_ask("context", stream), openai.BadRequestError)
    check(isinstance(e, openai.BadRequestError) and
          e.body.get("code") == "context_length_exceeded" and
          "maximum context length" in e.body.get("message", ""),
          "openai %s context: a 400 with code context_length_exceeded" % how, e)

    e = raises(lambda: oa_ask("vllmerror", stream), openai.BadRequestError)
    check(isinstance(e, openai.BadRequestError) and e.status_code == 400 and
          "maximum context length" in str(e),
          "openai %s vllmerror: vLLM's older body is a 400 too" % how, e)

    e = raises(lambda: oa_ask("429:0", stream), openai.RateLimitError)
    check(isinstance(e, openai.RateLimitError) and
          e.response.headers.get("retry-after") == "0",
          "openai %s 429: RateLimitError with Retry-After" % how, e)

    e = raises(lambda: oa_ask("plain:502", stream), openai.InternalServerError)
    check(isinstance(e, openai.InternalServerError) and e.status_code == 502,
          "openai %s plain:502: a proxy's HTML page" % how, e)

    quick = oa.with_options(timeout=0.4)
    e = raises(lambda: oa_ask("stall:1500", stream, client=quick),
               openai.APITimeoutError)
    check(isinstance(e, openai.APITimeoutError),
          "openai %s stall: the client's read timeout fires" % how, e)

    # OpenAI's reasoning models: max_completion_tokens, no temperature.
    e = raises(lambda: oa_ask("ok", stream, model="o3-mini", max_tokens=100),
               openai.BadRequestError)
    check(isinstance(e, openai.BadRequestError) and
          e.body.get("code") == "unsupported_parameter" and
          "max_completion_tokens" in e.body.get("message", ""),
          "openai %s o3-mini with max_tokens: 400 unsupported_parameter" % how,
          e)
    e = raises(lambda: oa_ask("ok", stream, model="gpt-5",
                              max_completion_tokens=100, temperature=0.7),
               openai.BadRequestError)
    check(isinstance(e, openai.BadRequestError) and
          e.body.get("code") == "unsupported_value",
          "openai %s gpt-5 with temperature 0.7: 400 unsupported_value" % how,
          e)
    r = oa_ask("ok", stream, model="o3-mini", max_completion_tokens=100,
               reasoning_effort="high")
    check(r.text == DEFAULT, "openai %s o3-mini with max_completion_tokens and "
          "reasoning_effort: accepted" % how, r.text)

    # ---- Anthropic ---------------------------------------------------------
    m, ev = an_ask("ok", stream)
    check([b.type for b in m.content] == ["text"] and m.content[0].text ==
          DEFAULT, "anthropic %s ok: one text block" % how, m.content)
    check(m.stop_reason == "end_turn", "anthropic %s ok: stop_reason end_turn"
          % how, m.stop_reason)
    check(m.usage.input_tokens > 0 and m.usage.output_tokens > 1,
          "anthropic %s ok: the usage" % how, m.usage)
    check(m.type == "message" and m.role == "assistant" and
          m.id.startswith("msg_"), "anthropic %s ok: the message" % how, m)
    if stream:
        want = ["message_start", "content_block_start", "content_block_delta",
                "content_block_stop", "message_delta", "message_stop"]
        check(all(w in ev for w in want) and ev[0] == "message_start" and
              ev[-1] == "message_stop",
              "anthropic streamed: the events in order", ev)

    m, ev = an_ask("think", stream)
    th, tx = blocks(m, "thinking"), blocks(m, "text")
    check(len(th) == 1 and "draft" in th[0].thinking and th[0].signature,
          "anthropic %s think: a thinking block with its signature" % how,
          m.content)
    check(len(tx) == 1 and tx[0].text == DEFAULT and
          m.content[0].type == "thinking",
          "anthropic %s think: the text block after it" % how, m.content)
    if stream:
        check("thinking" in ev and "signature" in ev,
              "anthropic streamed think: thinking and signature deltas", ev)

    m, ev = an_ask("redacted", stream)
    rd = blocks(m, "redacted_thinking")
    check(len(rd) == 1 and rd[0].data and len(blocks(m, "text")) == 1,
          "anthropic %s redacted: a redacted_thinking block" % how, m.content)

    m, ev = an_ask("nullcontent", stream)
    check(not blocks(m, "text") and blocks(m, "thinking") and
          m.stop_reason == "max_tokens" and m.usage.output_tokens > 1,
          "anthropic %s nullcontent: thinking only, max_tokens, usage" % how,
          (m.content, m.stop_reason, m.usage))

    m, ev = an_ask("length", stream)
    check(m.stop_reason == "max_tokens", "anthropic %s length: max_tokens"
          % how, m.stop_reason)

    m, ev = an_ask("refusal", stream)
    details = getattr(m, "stop_details", None)
    check(m.stop_reason == "refusal" and details is not None and
          "can't help" in (details.explanation or ""),
          "anthropic %s refusal: stop_reason and stop_details" % how,
          (m.stop_reason, details))

    m, ev = an_ask("context", stream)
    check(m.stop_reason == "model_context_window_exceeded",
          "anthropic %s context: stop_reason model_context_window_exceeded"
          % how, m.stop_reason)

    e = raises(lambda: an_ask("context400", stream), anthropic.BadRequestError)
    check(isinstance(e, anthropic.BadRequestError) and
          e.body["error"]["type"] == "invalid_request_error" and
          "prompt is too long" in e.body["error"]["message"],
          "anthropic %s context400: the error object" % how, e)

    e = raises(lambda: an_ask("529", stream), anthropic.APIStatusError)
    check(isinstance(e, anthropic.APIStatusError) and e.status_code == 529 and
          e.body["error"]["type"] == "overloaded_error",
          "anthropic %s 529: overloaded_error" % how, e)

    m, ev = an_ask("trickle:5", stream)
    check(blocks(m, "text")[0].text == DEFAULT,
          "anthropic %s trickle: the whole text" % how, m.content)

    quick_an = an.with_options(timeout=0.4)
    timeouts = (anthropic.APITimeoutError, httpx.TimeoutException)
    e = raises(lambda: an_ask("stall:1500", stream, client=quick_an), timeouts)
    check(isinstance(e, timeouts),
          "anthropic %s stall: the client's read timeout fires" % how, e)

    # Anthropic's rules for extended thinking, and unknown fields.
    m, ev = an_ask("think", stream, max_tokens=4096,
                   thinking={"type": "enabled", "budget_tokens": 2048})
    check(blocks(m, "thinking") and blocks(m, "text"),
          "anthropic %s thinking enabled: accepted" % how, m.content)
    # (Newer SDKs take no temperature argument: it goes as an extra field.)
    e = raises(lambda: an_ask("ok", stream, max_tokens=4096,
                              extra_body={"temperature": 0.5},
                              thinking={"type": "enabled",
                                        "budget_tokens": 2048}),
               anthropic.BadRequestError)
    check(isinstance(e, anthropic.BadRequestError) and
          "temperature" in e.body["error"]["message"],
          "anthropic %s thinking with temperature 0.5: 400" % how, e)
    e = raises(lambda: an_ask("ok", stream, max_tokens=2048,
                              thinking={"type": "enabled",
                                        "budget_tokens": 2048}),
               anthropic.BadRequestError)
    check(isinstance(e, anthropic.BadRequestError) and
          "budget_tokens" in e.body["error"]["message"],
          "anthropic %s budget not below max_tokens: 400" % how, e)
    e = raises(lambda: an_ask("ok", stream, extra_body={"stream_options": {}}),
               anthropic.BadRequestError)
    check(isinstance(e, anthropic.BadRequestError) and
          "Extra inputs are not permitted" in e.body["error"]["message"],
          "anthropic %s an unknown field: 400" % how, e)
    m, ev = an_ask("ok", stream, output_config={"effort": "high"})
    check(blocks(m, "text")[0].text == DEFAULT,
          "anthropic %s output_config.effort: accepted" % how, m.content)

# ---- faults inside a stream ------------------------------------------------
for name, ask, sdk, words in (("openai", oa_ask, openai, "server had an error"),
                              ("anthropic", an_ask, anthropic, "Overloaded")):
    e = raises(lambda: ask("streamerror", True), sdk.APIError)
    check(isinstance(e, sdk.APIError) and words in str(e),
          "%s streamerror: the SDK raises the error event" % name, e)
    broken = (sdk.APIConnectionError, httpx.HTTPError)
    e = raises(lambda: ask("cut", True), broken)
    check(isinstance(e, broken),
          "%s cut: a stream cut halfway raises" % name, e)

r = oa_ask("nodone", True)
check(r.finish is None and r.usage is None and r.text == DEFAULT,
      "openai nodone: the text, but no finish_reason, usage or [DONE]",
      (r.finish, r.usage))
m, ev = an_ask("nodone", True)
check(m.stop_reason is None and "message_stop" not in ev,
      "anthropic nodone: no stop_reason, no message_stop", (m.stop_reason, ev))

# ---- batch APIs --------------------------------------------------------------
# The requests of a batch are answered as the interactive endpoints answer
# them (a marker gives each its behaviour); a marker [[kevo-batch:PLAN]] in
# the first request gives the batch its plan (loopback-server.h).
def oa_line(cid, behaviour, plan=None, url="/v1/chat/completions"):
    content = marker(behaviour)
    if plan:
        content += " [[kevo-batch:%s]]" % plan
    return {"custom_id": cid, "method": "POST", "url": url,
            "body": {"model": "gpt-4o-mini", "max_tokens": 64,
                     "messages": [{"role": "user", "content": content}]}}


def oa_batch(lines):
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    f = oa.files.create(file=("requests.jsonl", data), purpose="batch")
    b = oa.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions",
                          completion_window="24h")
    return data, f, b


def oa_lines(file_id):
    text = oa.files.content(file_id).text
    return [json.loads(x) for x in text.splitlines() if x.strip()]


data, f, b = oa_batch([oa_line("a", "ok", "wait:1"), oa_line("b", "400"),
                       oa_line("c", "ok")])
check(f.purpose == "batch" and f.bytes == len(data) and
      f.filename == "requests.jsonl" and f.id.startswith("file-"),
      "openai files.create: a batch input file", f)
g = oa.files.retrieve(f.id)
check(g.id == f.id and g.bytes == len(data), "openai files.retrieve", g)
check(oa.files.content(f.id).content == data,
      "openai files.content: the bytes uploaded", "")
check(b.status == "validating" and b.request_counts.total == 3 and
      b.endpoint == "/v1/chat/completions" and b.input_file_id == f.id and
      b.completion_window == "24h",
      "openai batches.create: validating, 3 requests", b)
b = oa.batches.retrieve(b.id)
check(b.status == "in_progress" and b.output_file_id is None,
      "openai batches.retrieve: in progress for the polls of its plan", b)
b = oa.batches.retrieve(b.id)
check(b.status == "completed" and b.request_counts.completed == 2 and
      b.request_counts.failed == 1 and b.output_file_id and b.error_file_id,
      "openai batches.retrieve: completed, 2 done and 1 failed", b)
out = oa_lines(b.output_file_id)
check([x["custom_id"] for x in out] == ["a", "c"] and
      all(x["response"]["status_code"] == 200 and x["error"] is None
          for x in out),
      "openai output file: the requests that succeeded", out)
cc = openai.types.chat.ChatCompletion.model_validate(out[0]["response"]["body"])
check(cc.choices[0].message.content == DEFAULT and cc.usage.prompt_tokens > 0,
      "openai output file: each body a chat completion", cc)
err = oa_lines(b.error_file_id)
check(len(err) == 1 and err[0]["custom_id"] == "b" and
      err[0]["response"]["status_code"] == 400 and
      err[0]["response"]["body"]["error"]["type"] == "invalid_request_error",
      "openai error file: the request answered 400, with its error body", err)

_, _, b = oa_batch([oa_line("a", "ok", "expire:1"), oa_line("b", "ok")])
b = oa.batches.retrieve(b.id)
err = oa_lines(b.error_file_id) if b.error_file_id else []
check(b.status == "expired" and len(oa_lines(b.output_file_id)) == 1 and
      len(err) == 1 and err[0]["response"] is None and
      err[0]["error"]["code"] == "batch_expired",
      "openai expired: one result, one batch_expired error", (b, err))

_, _, b = oa_batch([oa_line("a", "ok", "wait:5"), oa_line("b", "ok")])
c = oa.batches.cancel(b.id)
check(c.status == "cancelling" and c.cancelling_at,
      "openai batches.cancel: cancelling", c)
b = oa.batches.retrieve(b.id)
err = oa_lines(b.error_file_id) if b.error_file_id else []
check(b.status == "cancelled" and b.output_file_id is None and
      [x["error"]["code"] for x in err] == ["batch_cancelled"] * 2,
      "openai cancelled: each request batch_cancelled", (b, err))
e = raises(lambda: oa.batches.cancel(b.id), openai.APIStatusError)
check(isinstance(e, openai.APIStatusError) and e.status_code == 409,
      "openai batches.cancel of an ended batch: 409", e)

_, _, b = oa_batch([oa_line("a", "ok", url="/v1/embeddings")])
b = oa.batches.retrieve(b.id)
check(b.status == "failed" and b.errors.data[0].line == 1 and
      "endpoint" in b.errors.data[0].message,
      "openai failed: a line for another endpoint, named by its line", b)
e = raises(lambda: oa.batches.retrieve("batch_nothing"), openai.NotFoundError)
check(isinstance(e, openai.NotFoundError),
      "openai batches.retrieve of no batch: 404", e)


def an_req(cid, behaviour, plan=None):
    content = marker(behaviour)
    if plan:
        content += " [[kevo-batch:%s]]" % plan
    return {"custom_id": cid,
            "params": {"model": "claude-sonnet-4-5", "max_tokens": 64,
                       "messages": [{"role": "user", "content": content}]}}


mb = an.messages.batches.create(requests=[an_req("a", "ok", "wait:1"),
                                          an_req("b", "400"),
                                          an_req("c", "ok")])
check(mb.type == "message_batch" and mb.processing_status == "in_progress"
      and mb.request_counts.processing == 3 and mb.results_url is None,
      "anthropic messages.batches.create: in progress, 3 processing", mb)
mb = an.messages.batches.retrieve(mb.id)
check(mb.processing_status == "in_progress",
      "anthropic messages.batches.retrieve: in progress for its plan", mb)
mb = an.messages.batches.retrieve(mb.id)
check(mb.processing_status == "ended" and mb.ended_at and mb.results_url and
      mb.request_counts.succeeded == 2 and mb.request_counts.errored == 1,
      "anthropic messages.batches.retrieve: ended, 2 succeeded, 1 errored",
      mb)
res = {x.custom_id: x.result for x in an.messages.batches.results(mb.id)}
check(res["a"].type == "succeeded" and
      res["a"].message.content[0].text == DEFAULT and
      res["a"].message.usage.input_tokens > 0,
      "anthropic messages.batches.results: a message", res.get("a"))
check(res["b"].type == "errored" and
      res["b"].error.error.type == "invalid_request_error",
      "anthropic messages.batches.results: the error of one", res.get("b"))

mb = an.messages.batches.create(requests=[an_req("a", "ok", "expire:1"),
                                          an_req("b", "ok")])
mb = an.messages.batches.retrieve(mb.id)
res = [x.result.type for x in an.messages.batches.results(mb.id)]
check(res == ["succeeded", "expired"] and mb.request_counts.expired == 1,
      "anthropic expired: one result, one expired", (res, mb))

mb = an.messages.batches.create(requests=[an_req("a", "ok", "wait:5"),
                                          an_req("b", "ok")])
c = an.messages.batches.cancel(mb.id)
check(c.processing_status == "canceling" and c.cancel_initiated_at,
      "anthropic messages.batches.cancel: canceling", c)
mb = an.messages.batches.retrieve(mb.id)
res = [x.result.type for x in an.messages.batches.results(mb.id)]
check(mb.processing_status == "ended" and res == ["canceled", "canceled"] and
      mb.request_counts.canceled == 2,
      "anthropic canceled: each request canceled", (res, mb))
e = raises(lambda: an.messages.batches.create(
    requests=[an_req("not ok!", "ok")]), anthropic.BadRequestError)
check(isinstance(e, anthropic.BadRequestError),
      "anthropic a custom_id outside [a-zA-Z0-9_-]: 400", e)

proc.send_signal(signal.SIGTERM)
try:
    proc.wait(timeout=10)
except subprocess.TimeoutExpired:
    proc.kill()
check(proc.returncode == 0, "loopback-serve exits 0 on SIGTERM",
      proc.returncode)
print("1..%d" % count)
sys.exit(1 if failed else 0)
