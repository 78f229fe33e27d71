/*
 * headers.h: the CUDA headers that a kernel may include, loaded once by the
 * compile worker and handed to NVRTC from memory.
 *
 * NVRTC has none of the toolkit's headers built in, and a compile never
 * gets an include path into the host file system. So the compile worker
 * reads, at start, the allowed headers (lib/proc/include_scan.h:
 * kevo__include_allowed, and every file under cuda/std/) and every header
 * they include, found by following their #include directives through the
 * toolkit's include directory (and its cccl/ subdirectory, where CUDA 13
 * keeps <cuda/std/...> and <nv/...>). A quoted include is looked for beside
 * the header that has it first, as the preprocessor does; an angle include
 * in the include directories. Names that resolve nowhere, and files outside
 * the include directories, are left out: NVRTC says "could not open source
 * file" should a compile reach them. NVRTC finds an in-memory header by the
 * name exactly as a directive writes it, so each file is offered under its
 * name in the include directory ("cooperative_groups/details/info.h") and
 * under every other spelling that reaches it ("info.h" in the headers of
 * the same directory). Kernels still get only what the include scan
 * allows: the rest is there for the headers themselves.
 */
#ifndef KEVO_WORKER_HEADERS_H
#define KEVO_WORKER_HEADERS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/kevo_private.h"

/* A loaded header set. Everything is owned by it. */
typedef struct kevo__headers {
    char *dir;          /* the include directory read; NULL when none */
    size_t files;       /* distinct files loaded */
    size_t bytes;       /* their total size */
    size_t count;       /* include names, count >= files */
    const char **names; /* sorted include names */
    const char **texts; /* texts[i]: the file that names[i] includes */
    /* Spellings that mean two different files depending on the header that
     * writes them; the first file found keeps the name. */
    size_t conflicts;
    /* 16 hex digits: a hash of every name with its text, "" for none. */
    char hash[17];
    void *priv;
} kevo__headers;

/*
 * kevo__headers_dir: the toolkit include directory to read, in a new
 * string: $CUDA_HOME/include when CUDA_HOME is set, else the configure-time
 * toolkit's (KEVO_CUDA_HOME), else /usr/local/cuda/include; the first that
 * is a directory. NULL when none is (or out of memory).
 */
char *kevo__headers_dir(void);

/*
 * kevo__headers_load: loads the allowed headers and their closure from
 * include_dir (NULL or a directory that does not exist: an empty set).
 * Files that cannot be read are left out with a line on stderr. Returns
 * the set, or NULL with err set: KEVO_ENOMEM, or KEVO_ELIMIT for more than
 * 20000 files or 256 MiB.
 */
kevo__headers *kevo__headers_load(const char *include_dir, kevo_error *err);

/* Frees the set; NULL does nothing. */
void kevo__headers_free(kevo__headers *headers);

#endif
