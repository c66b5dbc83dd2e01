"""MLflow's own Python client on the tracking server argv[1]: argv[2] "run RUN_ID" prints the run's experiment name,
status, params and every metric's history as JSON; "delete EXPERIMENT_NAME" deletes that experiment."""
import json
import sys

from mlflow.tracking import MlflowClient

client = MlflowClient(tracking_uri=sys.argv[1])
if sys.argv[2] == "delete":
    client.delete_experiment(client.get_experiment_by_name(sys.argv[3]).experiment_id)
    print("{}")
else:
    run = client.get_run(sys.argv[3])
    metrics = {
        key: sorted([m.step, m.value] for m in client.get_metric_history(run.info.run_id, key))
        for key in run.data.metrics
    }
    json.dump(
        {
            "experiment": client.get_experiment(run.info.experiment_id).name,
            "status": run.info.status,
            "params": run.data.params,
            "tags": {k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.") or k == "mlflow.runName"},
            "metrics": metrics,
        },
        sys.stdout,
    )
