"""TensorBoard's Python reader (plugin_event_accumulator.EventAccumulator, what `tensorboard --load_fast=false` uses)
on the event folder argv[1], nothing downsampled; prints every series by plugin as JSON:
{"scalars": {tag: [[step, value]]}, "histograms": {tag: [[step, total count]]}, "text": {tag: [[step, text]]}}."""
import json
import sys

from tensorboard.backend.event_processing import plugin_event_accumulator
from tensorboard.util import tensor_util

accumulator = plugin_event_accumulator.EventAccumulator(sys.argv[1], size_guidance={"tensors": 0})
accumulator.Reload()
out = {"scalars": {}, "histograms": {}, "text": {}}
for plugin in out:
    for tag in accumulator.PluginTagToContent(plugin):
        series = []
        for event in accumulator.Tensors(tag):
            array = tensor_util.make_ndarray(event.tensor_proto)
            if plugin == "scalars":
                value = float(array.item())
            elif plugin == "histograms":
                value = float(array[:, 2].sum())
            else:
                value = array.item().decode("utf-8")
            series.append([event.step, value])
        out[plugin][tag] = series
json.dump(out, sys.stdout)
