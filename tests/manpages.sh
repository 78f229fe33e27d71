#!/bin/sh
# manpages.sh: every public function has a man page, every page is
# complete and well-formed, and no page documents a function that is gone.
# A page is either a full page (NAME, SYNOPSIS, DESCRIPTION, RETURN VALUE,
# ERRORS, EXAMPLE) or a one-line ".so man3/OTHER.3" alias to a full page
# that names the function in its NAME section. The STABILITY section of the
# page that documents a function names it exactly when tests/symbols.txt
# marks it experimental (kevo-api(7)); a page of stable functions alone has
# no such section.
srcdir=${KEVO_SRCDIR:-.}
man=$srcdir/man
n=0
status=0
say() { n=$((n + 1)); if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; status=1; fi; }

full_page_ok() { # file -> prints missing sections
  for s in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS EXAMPLE; do
    grep -q "^\.SH \"*$s\"*\$" "$1" || printf ' %s' "$s"
  done
}

# stability_ok PAGE SYM STABILITY: the page's STABILITY section names SYM
# when it is experimental, and only then.
stability_ok() {
  named=stable
  sed -n '/^\.SH STABILITY/,/^\.SH/p' "$1" | grep -qw "$2" && named=experimental
  if [ "$named" = "$3" ]; then
    return 0
  fi
  say fail "$(basename "$1"): $2 is $3 in tests/symbols.txt, $named by its STABILITY section"
  return 1
}

while read -r sym stability; do
  page=$man/$sym.3
  if [ ! -f "$page" ]; then
    say fail "$sym has a man page"
    continue
  fi
  if head -n 1 "$page" | grep -q '^\.so '; then
    target=$man/$(head -n 1 "$page" | sed 's/^\.so man3\///')
    if [ ! -f "$target" ]; then
      say fail "$sym: alias target $(head -n 1 "$page") exists"
    elif ! sed -n '/^\.SH NAME/,/^\.SH/p' "$target" | grep -q "\b$sym\b"; then
      say fail "$sym: named in the NAME section of $(basename "$target")"
    elif stability_ok "$target" "$sym" "$stability"; then
      say ok "$sym documented in $(basename "$target")"
    fi
  else
    missing=$(full_page_ok "$page")
    if [ -n "$missing" ]; then
      say fail "$sym.3 has every section (missing:$missing)"
    elif ! sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$page" | grep -q "$sym"; then
      say fail "$sym.3 shows $sym in its SYNOPSIS"
    elif stability_ok "$page" "$sym" "$stability"; then
      say ok "$sym.3 is complete"
    fi
  fi
done < "$srcdir/tests/symbols.txt"

for page in "$man"/*.3; do
  sym=$(basename "$page" .3)
  grep -q "^$sym " "$srcdir/tests/symbols.txt" && continue
  say fail "$(basename "$page") documents an exported function"
done

for page in "$man"/*.1 "$man"/*.5 "$man"/*.7; do
  [ -f "$page" ] || continue
  missing=
  for s in NAME DESCRIPTION; do
    grep -q "^\.SH \"*$s\"*\$" "$page" || missing="$missing $s"
  done
  [ -z "$missing" ] && say ok "$(basename "$page") is complete" ||
    say fail "$(basename "$page") has NAME and DESCRIPTION (missing:$missing)"
done

if command -v groff >/dev/null 2>&1; then
  bad=
  for page in "$man"/*.[1357]; do
    head -n 1 "$page" | grep -q '^\.so ' && continue
    out=$(cd "$man" && groff -man -Tutf8 -ww -z "$(basename "$page")" 2>&1)
    [ -n "$out" ] && { bad="$bad $(basename "$page")"; echo "$out" | sed 's/^/# /'; }
  done
  [ -z "$bad" ] && say ok "groff renders every page without warnings" ||
    say fail "groff warnings in:$bad"
fi
echo "1..$n"
exit $status
