#define F "/etc/passwd"
#if __has_include(F)
#endif
