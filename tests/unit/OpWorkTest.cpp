#include "TestGraphs.h"
