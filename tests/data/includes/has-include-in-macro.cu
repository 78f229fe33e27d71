#define PROBE __has_include("/etc/passwd")
