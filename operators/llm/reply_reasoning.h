/*
 * reply_reasoning.h: the reasoning in a reply, which is never a source of
 * code or edits. Reasoning models write their thoughts between <think> and
 * </think> (DeepSeek-R1, QwQ, Qwen3; also <thinking> and <reasoning>, in
 * any case); a server that runs such a model without a reasoning parser
 * puts the opening tag in the prompt, so the reply starts inside the
 * thought and only the closing tag appears.
 *
 * Tags are found anywhere in the reply, fences or not. Outside reasoning,
 * an opening tag starts a section that its own closing tag ends; a closing
 * tag alone ends a section that began at the end of the previous one (or
 * at the start of the reply). Inside a section, other tags are text. A
 * section left open runs to the end of the reply.
 */
#ifndef KEVO_LLM_REPLY_REASONING_H
#define KEVO_LLM_REPLY_REASONING_H

#include "reply_private.h"

/* Removes the reasoning sections from c->text (the normalised reply), in
 * place, keeping their line breaks so that line numbers stay those of the
 * reply (a section within one line becomes one space), and records them
 * in c->thought. Fails as no_code when a section is never closed (the
 * reply ended inside its reasoning) or when nothing but white space is
 * left. */
kevo_reply_kind kevo__reply_strip_reasoning(ctx *c);

/* Adds to c->note what reasoning was set aside, if any. */
void kevo__reply_note_reasoning(ctx *c);

#endif
