"""The tinker SDK's own types and protobuf classes against drmas's Tinker wire (test/interop/tinkerWire.test.ts).

  decode REQUESTS.json   each recorded request ({route, contentType, body (base64)}) parsed by the SDK: JSON bodies by
                         the request type the SDK sends to that route (StrictBase: an unknown or missing field fails),
                         protobuf bodies by tinker_public_pb2.ForwardBackwardRequest; prints what it read as JSON
  encode                 a ForwardBackwardRequest the SDK builds and encodes (request_conv.forward_backward_request_to_proto),
                         printed as base64 with the fields it holds
"""

import base64
import json
import sys

import numpy as np
from tinker import types
from tinker.proto import tinker_public_pb2 as public_pb
from tinker.proto.request_conv import forward_backward_request_to_proto

# The request type the SDK sends to each route (tinker/resources/*.py).
JSON_TYPES = {
    "create_session": types.CreateSessionRequest,
    "session_heartbeat": types.SessionHeartbeatRequest,
    "create_model": types.CreateModelRequest,
    "optim_step": types.OptimStepRequest,
    "save_weights": types.SaveWeightsRequest,
    "save_weights_for_sampler": types.SaveWeightsForSamplerRequest,
    "load_weights": types.LoadWeightsRequest,
    "asample": types.SampleRequest,
    "retrieve_future": types.FutureRetrieveRequest,
}


def read_proto(body: bytes) -> dict:
    msg = public_pb.ForwardBackwardRequest.FromString(body)
    data = []
    for datum in msg.data:
        tokens = [np.frombuffer(c.encoded_text.tokens, dtype=np.int32).tolist() for c in datum.model_input]
        inputs = {}
        for name, tensor in datum.loss_fn_inputs.items():
            dtype = {public_pb.DTYPE_FLOAT32: np.float32, public_pb.DTYPE_INT64: np.int64}[tensor.dtype]
            inputs[name] = {
                "dtype": public_pb.DType.Name(tensor.dtype),
                "shape": list(tensor.shape),
                "data": np.frombuffer(tensor.dense, dtype=dtype).tolist(),
            }
        data.append({"tokens": tokens, "loss_fn_inputs": inputs})
    return {
        "model_id": msg.model_id,
        "seq_id": msg.seq_id,
        "loss_fn": msg.loss_fn,
        "forward_only": msg.forward_only,
        "data": data,
    }


def decode(path: str) -> None:
    out = []
    for request in json.load(open(path)):
        route = request["route"]
        body = base64.b64decode(request["body"])
        if request["contentType"] == "application/x-protobuf":
            out.append({"route": route, "proto": read_proto(body)})
        else:
            parsed = JSON_TYPES[route].model_validate(json.loads(body))
            out.append({"route": route, "type": type(parsed).__name__, "fields": parsed.model_dump(mode="json", exclude_unset=True)})
    json.dump(out, sys.stdout)


def encode() -> None:
    datums = [
        types.Datum(
            model_input=types.ModelInput.from_ints([5, 9, 300, 2]),
            loss_fn_inputs={
                "target_tokens": types.TensorData(data=[9, 300, 2, 77], dtype="int64", shape=[4]),
                "weights": types.TensorData(data=[0.0, 0.5, -1.25, 2.0], dtype="float32", shape=[4]),
            },
        ),
        types.Datum(
            model_input=types.ModelInput.from_ints([511, 0]),
            loss_fn_inputs={
                "target_tokens": types.TensorData(data=[0, 42], dtype="int64", shape=[2]),
                "weights": types.TensorData(data=[1.0, 0.125], dtype="float32", shape=[2]),
            },
        ),
    ]
    request = types.ForwardBackwardRequest(
        forward_backward_input=types.ForwardBackwardInput(data=datums, loss_fn="cross_entropy"),
        model_id="model_abc",
        seq_id=7,
    )
    msg = forward_backward_request_to_proto(request)
    msg.forward_only = True
    json.dump({"bytes": base64.b64encode(msg.SerializeToString()).decode(), "read": read_proto(msg.SerializeToString())}, sys.stdout)


if __name__ == "__main__":
    {"decode": lambda: decode(sys.argv[2]), "encode": encode}[sys.argv[1]]()
