// The Timeline widget as anywidget loads it: the view, and the check that the kernel is heard.

import type { TimelineModel } from "../common/messages";
import { initialize } from "../common/resync";
import { TimelineView } from "./index";

type Model = TimelineModel;

export default {
  initialize,
  render({ model, el }: { model: Model; el: HTMLElement }) {
    const view = new TimelineView(model, el);
    return () => view.destroy();
  },
};
