//===- Warning.h - Remarks that do not stop an analysis --------*- C++ -*-===//
#ifndef PERFC_IR_WARNING_H
#define PERFC_IR_WARNING_H

#include <string>

namespace perfc {

/// A remark about one node (or the model, when Node is empty) that did not
/// stop the analysis: an op outside the standard set, a shape that depends on
/// data. Printed on stderr and listed in JSON under "warnings".
struct Warning {
  std::string Node;
  std::string Message;
};

} // namespace perfc

#endif // PERFC_IR_WARNING_H
