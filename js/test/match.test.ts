import { describe, expect, it } from "vitest";
import { type Column, cellMatches, parseFilter, type Row, rowMatches } from "../src/picker/match";

// The bundled sample's device-profile list, as the picker receives it.
const columns: Column[] = [
  { key: "device_profile_name", label: "Name" },
  { key: "instance_id", label: "Instance" },
  { key: "process_id", label: "Process" },
  { key: "nc_id", label: "NeuronCore" },
  { key: "model_id", label: "Model" },
  { key: "session_id", label: "Session" },
];
const instances = ["i-0da8440102dae89fb", "i-0a88e4da06d80cbd2"];
const processes = ["1267860", "3589536", "1066305", "2624383"];
const rows: Row[] = Array.from({ length: 16 }, (_, i) => ({
  device_profile_name: `neuron_profile_${String(i + 1).padStart(3, "0")}`,
  instance_id: instances[Math.floor(i / 8)],
  process_id: processes[Math.floor(i / 4)],
  nc_id: String(Math.floor(i / 2) % 2),
  model_id: String((i % 2) + 1),
  session_id: "0",
}));
const shown = (text: string) =>
  rows.filter((r) => rowMatches(r, parseFilter(text, columns), columns)).map((r) => r.device_profile_name.slice(-3));

describe("the picker's filter", () => {
  it("reads a column's name followed by a value as that column", () => {
    expect(parseFilter("nc 3 2048", columns)).toEqual([
      { column: "nc_id", value: "3" },
      { column: null, value: "2048" },
    ]);
    for (const t of ["nc:1", "nc=1", "NC 1", "core 1", "neuroncore 1", "nc: 1", "nc_id 1"]) {
      expect(parseFilter(t, columns), t).toEqual([{ column: "nc_id", value: "1" }]);
    }
    expect(parseFilter("model 2 pid 1267860", columns)).toEqual([
      { column: "model_id", value: "2" },
      { column: "process_id", value: "1267860" },
    ]);
  });

  it("finds NeuronCore 1's profiles of model 2, and nothing for a core the profile has not", () => {
    expect(shown("nc 1 model 2")).toEqual(["004", "008", "012", "016"]);
    expect(shown("nc:1")).toHaveLength(8);
    expect(shown("nc 3")).toEqual([]);
    expect(shown("nc 3 2048")).toEqual([]);
  });

  it("matches a whole number as a whole value, not as digits inside ids", () => {
    // Before: "1 2" matched every row (digits inside process and instance ids).
    expect(shown("1 2")).toEqual(["004", "008", "012", "016"]); // a 1 (core 1) and a 2 (model 2)
    expect(shown("1267860")).toEqual(["001", "002", "003", "004"]);
    expect(shown("126")).toEqual([]); // a part of a process id is not that process
    expect(shown("3589536 nc 0")).toEqual(["005", "006"]);
  });

  it("finds other words inside any column", () => {
    expect(shown("profile_01")).toEqual(["010", "011", "012", "013", "014", "015", "016"]);
    expect(shown("i-0a88")).toHaveLength(8);
    expect(shown("")).toHaveLength(16);
    expect(shown("zzz")).toEqual([]);
  });

  it("leaves zeros that are part of a name alone", () => {
    expect(cellMatches("neuron_profile_001", "1")).toBe(false);
    expect(cellMatches("neuron_profile_001", "001")).toBe(true);
    expect(cellMatches("3", "03")).toBe(true);
    expect(shown("profile 3")).toEqual(["003"]); // naming the column, the number is the profile's
    expect(shown("3")).toEqual([]);
  });
});
