// Search: which event names match (a regular expression, or the text itself when it is not one),
// and stepping through the matching events, which the kernel finds in time order.

import { h } from "../common/dom";
import type { FindReply } from "../common/messages";
import type { Wish } from "./data";
import type { Range } from "./viewmath";

/** What the search reads and moves on the timeline. */
export interface SearchHost {
  view(): Range;
  names(): string[];
  selectedStart(): number | undefined;
  visibleTrackIds(): number[];
  ask(w: Wish): void;
  setView(v: Range): void;
  scrollToTrack(track: number): void;
  select(row: number): void;
  request(): void;
}

export class Search {
  readonly info = h("span", { class: "nw-note" });
  match: Uint8Array | null = null;
  private codes: number[] = [];

  constructor(private host: SearchHost) {}

  set(text: string): void {
    const { match, codes } = matchNames(this.host.names(), text);
    this.match = match;
    this.codes = codes;
    this.info.textContent = !text ? "" : codes.length ? `${codes.length} names` : "no match";
    this.host.request();
  }

  /** The next (1) or previous (-1) matching event after the selected one, else after the view's start. */
  find(direction: 1 | -1): void {
    if (!this.codes.length) return;
    const after = this.host.selectedStart() ?? this.host.view().t0;
    this.host.ask({
      type: "find",
      key: `find|${after}|${direction}|${this.codes.length}|${Math.random()}`,
      payload: { codes: this.codes, after, direction, tracks: this.host.visibleTrackIds() },
    });
  }

  found(msg: FindReply): void {
    if (msg.row < 0) {
      this.info.textContent = "no match";
      return;
    }
    // A match (row >= 0) comes with its place: index, start, end and track are there.
    this.info.textContent = `${msg.index! + 1} / ${msg.total.toLocaleString()}`;
    const dur = Math.max(msg.end! - msg.start!, 1000);
    const mid = (msg.start! + msg.end!) / 2;
    const v = this.host.view();
    const w = Math.max(v.t1 - v.t0, 3 * dur);
    this.host.setView({ t0: mid - w / 2, t1: mid + w / 2 });
    this.host.scrollToTrack(msg.track!);
    this.host.select(msg.row);
  }
}

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
