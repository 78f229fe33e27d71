/* no_entry.c: a shared object that is no operator plugin: it exports a
 * function, but not kevo_operator_entry. */
#include <kevo/operator.h>

KEVO_OPERATOR_EXPORT int kevo_test_not_an_entry(void);

KEVO_OPERATOR_EXPORT int kevo_test_not_an_entry(void)
{
    return 42;
}
