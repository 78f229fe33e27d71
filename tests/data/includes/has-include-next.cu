#if __has_include_next(<stdio.h>)
#endif
