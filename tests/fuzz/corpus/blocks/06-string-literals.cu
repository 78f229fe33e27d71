// Literals that look like blocks must not count.
static const char *a = "/* kevo:launch fake<<<1, 1>>>() */";
static const char *b = "// kevo:param X in {1}";
static const char *c = "escaped \" /* kevo:launch */ \\";
static const char d = '"';
static const char e = '/';
static const char f = '\'';
static const int big = 1'000'000;
static const char *g = R"x(/* kevo:launch raw<<<1, 1>>>() */ )" )x";
static const char *h = u8R"(// kevo:param Y in {2})";
/* kevo:launch
 *   real<<<1, 64>>>(x)
 */
// kevo:param
//   Z in {3, 4}
__global__ void real(float *x) {}
