#include "C:\\temp\\x.h"
