// Which event names a search matches: a regular expression, or the text itself when it is not one.

export function matchNames(names: string[], text: string): { match: Uint8Array | null; codes: number[] } {
  if (!text) return { match: null, codes: [] };
  let re: RegExp;
  try {
    re = new RegExp(text, "i");
  } catch {
    re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
  }
  const match = new Uint8Array(names.length);
  const codes: number[] = [];
  names.forEach((n, i) => {
    if (re.test(n)) {
      match[i] = 1;
      codes.push(i);
    }
  });
  return { match, codes };
}
