const char *a = "#include \"/etc/passwd\"";
const char *b = "\\"; const char c = '#';
const char d = '"'; const char *e = "__has_include(\"/x\")";
const char *f = R"(
#include "/etc/passwd"
)";
const char *g = R"xy(
)" #include "/etc/passwd"
)xy";
const char *h = u8R"(#include </etc/passwd>)";
const wchar_t *i = L"#include </etc/passwd>";
__global__ void k(float *x) { x[0] = 1; }
