#!/bin/sh
# Prints JSON from stdin on one line without whitespace outside strings
# (what `perfc batch` writes for each prediction).
awk 'BEGIN { s = 0; e = 0 }
{
  n = length($0)
  for (i = 1; i <= n; i++) {
    c = substr($0, i, 1)
    if (s) { printf "%s", c; if (e) e = 0; else if (c == "\\") e = 1; else if (c == "\"") s = 0 }
    else if (c == "\"") { s = 1; printf "%s", c }
    else if (c != " " && c != "\t") printf "%s", c
  }
}
END { printf "\n" }'
