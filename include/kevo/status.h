/*
 * kevo/status.h: the status codes every kevo function returns, and every
 * function of an operator plugin's host table. Types only: a plugin that
 * includes <kevo/operator.h> sees this header and no library function.
 */
#ifndef KEVO_STATUS_H
#define KEVO_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. 0 is success. Values are only ever appended. */
typedef enum kevo_status {
    KEVO_OK = 0,
    KEVO_ENOMEM = 1,    /* out of memory */
    KEVO_EINVAL = 2,    /* invalid argument to a kevo function */
    KEVO_EIO = 3,       /* a file or system call failed; errno in foreign */
    KEVO_ENOENT = 4,    /* no such file, name or entry */
    KEVO_EPARSE = 5,    /* text that does not parse (JSON, expression, block) */
    KEVO_EINVALID = 6,  /* well-formed input that fails validation */
    KEVO_EOVERFLOW = 7, /* 64-bit integer overflow in an expression */
    KEVO_EDIVZERO = 8,  /* division or remainder by zero in an expression */
    KEVO_EUNDEFINED = 9, /* an expression names a variable that has no value */
    KEVO_ECONSTRAINT = 10, /* a parameter assignment breaks a constraint */
    KEVO_ERANGE = 11,      /* a value or index outside its domain or bounds */
    KEVO_EEXIST = 12,      /* a name that is already taken */
    KEVO_ESTATE = 13,      /* a call that the object's state does not allow */
    KEVO_EFORMAT = 14,     /* a saved file of an unknown format or version */
    KEVO_ELIMIT = 15,      /* over a stated limit (memory, size, count) */
    KEVO_DONE = 16,        /* not an error: a reader has no more items */
    KEVO_EEXTERNAL = 17,   /* a library kevo uses failed; see domain, foreign */
    KEVO_ETIMEDOUT = 18, /* a wait, a compile or a run passed its time limit */
    KEVO_ENODEV = 19,    /* no usable GPU (no driver, no device) */
    KEVO_EWORKER = 20    /* a worker process died or broke the protocol */
} kevo_status;

#ifdef __cplusplus
}
#endif

#endif
