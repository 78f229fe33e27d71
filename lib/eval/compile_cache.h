/*
 * compile_cache.h: compiled kernels on disk, keyed by what determines them.
 *
 * The key is the SHA-256 (hex) of the source, the options in order, the
 * kernel names whose lowered names are wanted, and the NVRTC version (the
 * arch is among the options). The base directory is $KEVO_CACHE_DIR, else
 * $XDG_CACHE_HOME/kevo (when XDG_CACHE_HOME is an absolute path), else
 * $HOME/.cache/kevo; entries live in BASE/compile/ as one file each,
 * KEY.entry: a line "kevo-compile-cache 1", a line of JSON (the key, ok,
 * error, the lengths, the NVRTC version, seconds, lowered names and a
 * checksum of the body), then the log, the PTX and the cubin. An entry is
 * written to a temporary file in the same directory and renamed into
 * place, so readers never see half of one; an entry that is short, has a
 * bad header, another key or a wrong checksum counts as a miss (and is
 * replaced by the next store). Several processes may share a directory.
 */
#ifndef KEVO_COMPILE_CACHE_H
#define KEVO_COMPILE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kevo_private.h"

#define KEVO__CACHE_KEY_SIZE 65 /* 64 hex digits and the NUL */

typedef struct kevo__compile_cache kevo__compile_cache;

/* What an entry holds: a finished compile, successful or not. */
typedef struct kevo__cache_entry {
    bool ok;
    char *error; /* when !ok, else NULL */
    char *log;   /* never NULL once loaded */
    char *ptx;   /* NUL-terminated; NULL unless ok */
    size_t ptx_len;
    unsigned char *cubin; /* NULL unless ok */
    size_t cubin_len;
    char **lowered; /* nlowered names, each may be NULL */
    size_t nlowered;
    char *nvrtc;
    double seconds;
} kevo__cache_entry;

/* Frees what *entry holds and zeroes it. */
void kevo__cache_entry_clear(kevo__cache_entry *entry);

/* The base directory as above, in a new string; NULL with err set when
 * none of the variables gives one (KEVO_ENOENT) or on no memory. */
char *kevo__compile_cache_base_dir(kevo_error *err);

/*
 * kevo__compile_cache_open: base NULL for kevo__compile_cache_base_dir().
 * Creates BASE/compile (mkdir -p). Returns the cache or NULL with err set
 * (the directory cannot be made or written: KEVO_EIO, errno foreign).
 */
kevo__compile_cache *kevo__compile_cache_open(const char *base,
                                              kevo_error *err);
void kevo__compile_cache_close(kevo__compile_cache *cache);

/* The directory the entries are in (borrowed). */
const char *kevo__compile_cache_dir(const kevo__compile_cache *cache);

/* The key for these inputs in key (64 hex digits). */
void kevo__compile_cache_key(const char *source, const char *const *options,
                             size_t noptions, const char *const *kernels,
                             size_t nkernels, const char *nvrtc_version,
                             char key[KEVO__CACHE_KEY_SIZE]);

/*
 * kevo__compile_cache_lookup: loads entry key into *entry (which must be
 * empty). Returns true on a hit; false on a miss, a corrupt entry or an
 * unreadable one (*entry is left empty; counted as a miss).
 */
bool kevo__compile_cache_lookup(kevo__compile_cache *cache, const char *key,
                                kevo__cache_entry *entry);

/*
 * kevo__compile_cache_store: writes *entry as key atomically, replacing
 * any old one. Returns KEVO_OK, or KEVO_EIO / KEVO_ENOMEM with err set (a
 * cache that cannot be written is not fatal to a caller: it only loses the
 * entry).
 */
kevo_status kevo__compile_cache_store(kevo__compile_cache *cache,
                                      const char *key,
                                      const kevo__cache_entry *entry,
                                      kevo_error *err);

/* Lookups that hit and that missed since the cache was opened. */
void kevo__compile_cache_stats(const kevo__compile_cache *cache, uint64_t *hits,
                               uint64_t *misses);

#endif
