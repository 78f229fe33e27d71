
#include "../../secret.h"
