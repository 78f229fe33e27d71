/*
 * kevo_cli.c: what the driver's commands share.
 */
#include <stdio.h>

#include "kevo_cli.h"

const char *program = "kevo";

void cli_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            printf("\\n");
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}
