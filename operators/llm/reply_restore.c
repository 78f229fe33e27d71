/*
 * reply_restore.c: lost kevo:launch and kevo:param blocks restored into
 * the child (see reply_restore.h).
 */
#include "reply_restore.h"

#include <stdlib.h>

kevo_reply_kind kevo__reply_restore_blocks(ctx *c, char **child,
                                           size_t *child_len, const source *src,
                                           size_t nsrc)
{
    cscan cs = {0};
    llm_buf msg = {0}, head = {0};
    kevo_reply_kind kind = KEVO_REPLY_OK;
    if (!kevo__reply_scan(&cs, *child, *child_len)) {
        kind = kevo__reply_nomem(c);
        goto done;
    }
    blocks have = kevo__reply_blocks(c, *child, *child_len);
    names kernels = {0};
    kevo__reply_global_kernels(&cs, &kernels);
    span launch = {NULL, 0}, param = {NULL, 0};
    const char *launch_from = NULL, *param_from = NULL;

    if (!have.found[TAG_LAUNCH]) {
        bool any = false;
        for (size_t k = 0; k < nsrc && !launch.s; k++) {
            blocks bl = kevo__reply_blocks(c, src[k].text, src[k].len);
            if (!bl.found[TAG_LAUNCH] || !bl.whole[TAG_LAUNCH])
                continue;
            span text = {src[k].text + bl.start[TAG_LAUNCH],
                         bl.end[TAG_LAUNCH] - bl.start[TAG_LAUNCH]};
            const names *launched = &bl.names[TAG_LAUNCH];
            const char *missing = NULL, *defined = NULL;
            for (size_t i = 0; i < launched->n && !missing; i++) {
                span w = {launched->v[i], strlen(launched->v[i])};
                if (!kevo__reply_names_has(&kernels, launched->v[i]) &&
                    !(kernels.overflow &&
                      kevo__reply_has_ident(&cs, 0, cs.nt, w)))
                    missing = launched->v[i];
            }
            /* A parameter of the block's launches that the child turned
             * into a macro of its own leaves the launch unevaluable. */
            const names *params = &bl.names[TAG_PARAM];
            bool has_params = bl.found[TAG_PARAM] && bl.whole[TAG_PARAM];
            for (size_t i = 0; has_params && i < params->n && !defined; i++) {
                if (kevo__reply_has_word(text, params->v[i]) &&
                    kevo__reply_defines(&cs, params->v[i]))
                    defined = params->v[i];
            }
            if (!missing && !defined && launched->n > 0) {
                launch = text;
                launch_from = src[k].label;
                break;
            }
            if (!any) {
                kevo__llm_buf_printf(
                    &msg,
                    "the child has no kevo:launch block, and %s's "
                    "cannot be restored: ",
                    src[k].label);
                if (missing)
                    kevo__llm_buf_printf(
                        &msg,
                        "it launches '%s', which is not a __global__ "
                        "kernel of the child",
                        missing);
                else if (defined)
                    kevo__llm_buf_printf(
                        &msg,
                        "it uses the parameter '%s', which the child "
                        "#defines itself",
                        defined);
                else
                    kevo__llm_buf_puts(&msg, "it names no kernel");
                if (missing && kernels.n) {
                    kevo__llm_buf_puts(&msg, " (the child's kernels: ");
                    kevo__reply_names_list(&msg, &kernels);
                    kevo__llm_buf_puts(&msg, ")");
                } else if (missing) {
                    kevo__llm_buf_puts(&msg,
                                       " (the child has no __global__ kernel)");
                }
            }
            any = true;
        }
        if (!launch.s) {
            if (!any) {
                if (c->parent)
                    kevo__llm_buf_puts(
                        &msg, "the child has no kevo:launch block, and "
                              "the parent has none to restore");
                else
                    kevo__llm_buf_puts(
                        &msg, "the child has no kevo:launch block, and "
                              "there is no parent to restore one from");
            }
            kind = kevo__reply_fail_with(c, KEVO_REPLY_LAUNCH_BLOCK_LOST, &msg);
            goto done;
        }
    }

    if (!have.found[TAG_PARAM]) {
        span own_launch = launch;
        if (have.found[TAG_LAUNCH])
            own_launch = (span){*child + have.start[TAG_LAUNCH],
                                have.end[TAG_LAUNCH] - have.start[TAG_LAUNCH]};
        for (size_t k = 0; k < nsrc && !param.s; k++) {
            blocks bl = kevo__reply_blocks(c, src[k].text, src[k].len);
            if (!bl.found[TAG_PARAM] || !bl.whole[TAG_PARAM])
                continue;
            span text = {src[k].text + bl.start[TAG_PARAM],
                         bl.end[TAG_PARAM] - bl.start[TAG_PARAM]};
            const names *declared = &bl.names[TAG_PARAM];
            for (size_t i = 0; i < declared->n; i++) {
                span name = {declared->v[i], strlen(declared->v[i])};
                bool used = kevo__reply_has_ident(&cs, 0, cs.nt, name) ||
                            kevo__reply_has_word(own_launch, declared->v[i]);
                if (used && !kevo__reply_defines(&cs, declared->v[i])) {
                    param = text;
                    param_from = src[k].label;
                    break;
                }
            }
        }
    }

    if (launch.s || param.s) {
        if (launch.s) {
            kevo__llm_buf_append(&head, launch.s, launch.n);
            kevo__llm_buf_puts(&head, "\n");
            kevo__llm_buf_printf(
                &c->note, "; kevo:launch block restored from %s", launch_from);
            c->out->launch_restored = true;
        }
        if (param.s) {
            kevo__llm_buf_append(&head, param.s, param.n);
            kevo__llm_buf_puts(&head, "\n");
            kevo__llm_buf_printf(
                &c->note, "; kevo:param block restored from %s", param_from);
            c->out->param_restored = true;
        }
        kevo__llm_buf_puts(&head, "\n");
        kevo__llm_buf_append(&head, *child, *child_len);
        if (head.failed) {
            kind = kevo__reply_nomem(c);
            goto done;
        }
        free(*child);
        *child_len = head.len;
        *child = kevo__llm_buf_take(&head);
        if (!*child)
            kind = kevo__reply_nomem(c);
    }
done:
    kevo__reply_scan_free(&cs);
    kevo__llm_buf_free(&msg);
    kevo__llm_buf_free(&head);
    return kind;
}
