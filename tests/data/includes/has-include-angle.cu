#if defined(X) || __has_include ( </etc/shadow> )
#endif
