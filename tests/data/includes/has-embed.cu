#if __has_embed("/etc/passwd")
#endif
