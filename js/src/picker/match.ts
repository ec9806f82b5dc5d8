// The picker's filter: the words a user types, matched the way they name the columns.
//
//   nc 3 / nc:3 / nc=3 / NeuronCore 3   the NeuronCore column is 3 (a column's name, then its value)
//   2048                                 a whole number: a cell holding 2048 as a whole value
//                                        (not the 2048 inside process 120489 or instance i-0a2048f)
//   profile_01, i-0da8                   other words: found inside any column, any case
//
// Every term must match (in any column, or in its own column when named).

export interface Column {
  key: string;
  label: string;
}

export type Row = Record<string, string>;

export interface Term {
  column: string | null; // a column's key, or null for any column
  value: string;
}

// Short names users give columns, beyond the column's key and label.
const ALIASES: Record<string, string[]> = {
  nc_id: ["nc", "core", "lnc", "neuron_core"],
  process_id: ["pid", "proc"],
  instance_id: ["node", "host"],
  model_id: ["neff"],
  device_profile_name: ["profile"],
};

/** Each way of naming a column, lower case: its key, the key without `_id`, its label, aliases. */
export function columnNames(columns: Column[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const c of columns) {
    const key = c.key.toLowerCase();
    for (const n of [
      key,
      key.replace(/_id$/, ""),
      c.label.toLowerCase().replace(/\s+/g, "_"),
      ...(ALIASES[c.key] ?? []),
    ]) {
      if (n && !names.has(n)) names.set(n, c.key);
    }
  }
  return names;
}

/** The typed filter as terms: `name value`, `name:value` and `name=value` pairs, and free words. */
export function parseFilter(text: string, columns: Column[]): Term[] {
  const names = columnNames(columns);
  const words = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const terms: Term[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const pair = /^([^:=]+)[:=](.*)$/.exec(w);
    if (pair && names.has(pair[1])) {
      // "nc:" followed by a space and the value reads as "nc: 3"
      const value = pair[2] || words[i + 1] || "";
      if (!pair[2] && words[i + 1] !== undefined) i++;
      if (value) terms.push({ column: names.get(pair[1]) ?? null, value });
      continue;
    }
    // A column's name followed by a value that is not itself a column's name: "nc 3", "model 2".
    const next = words[i + 1];
    if (names.has(w) && next !== undefined && !names.has(next) && !/[:=]/.test(next)) {
      terms.push({ column: names.get(w) ?? null, value: next });
      i++;
      continue;
    }
    terms.push({ column: null, value: w });
  }
  return terms;
}

const WHOLE = /^\d+$/;

/** Does one cell's text hold the value: a whole number as a whole value, other words anywhere in it. */
export function cellMatches(cell: string, value: string, named = false): boolean {
  const text = cell.toLowerCase();
  if (!WHOLE.test(value)) return text.includes(value);
  // Whole values are the cell's words made of digits only: not the 2 ending instance i-0a88...cbd2.
  // "03" finds core 3. A bare "1" does not find profile_001, whose zeros are part of its name;
  // "profile 1", naming the column, does.
  return text
    .split(/[^a-z0-9]+/)
    .some(
      (word) =>
        WHOLE.test(word) && (word === value || ((named || !/^0\d/.test(word)) && Number(word) === Number(value))),
    );
}

export function rowMatches(row: Row, terms: Term[], columns: Column[]): boolean {
  return terms.every((t) =>
    t.column !== null
      ? cellMatches(row[t.column] ?? "", t.value, true)
      : columns.some((c) => cellMatches(row[c.key] ?? "", t.value)),
  );
}
