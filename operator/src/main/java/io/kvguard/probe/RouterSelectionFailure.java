package io.kvguard.probe;

import java.util.Optional;

/**
 * sgl-model-gateway's own HTTP 503 when it has no worker to send a request to: no engine saw the
 * prompt, so the answer proves nothing about the engine's rejection path (issue 26 §2). Shape as
 * read in sgl-project/sglang v0.5.18 (through bytedance-iaas/sglang), {@code
 * sgl-model-gateway/src/routers}: {@code http/pd_router.rs:191-197} ("No available servers: " and
 * the selection error, {@code pd_router.rs:1061-1079}) and {@code :100} ("No prefill servers
 * available"), written by {@code error.rs:9-21,55-81} as {@code {"error": {"type": "Service
 * Unavailable", "code": C, "message": M}}}. A worker's own 503 to {@code /generate} comes back as
 * {@code prefill_unavailable} or {@code decode_unavailable} ({@code pd_router.rs:1320-1323,
 * 609-610}; {@code server_unavailable}, {@code :156-159}, is for the GET routes it proxies) and
 * stays the engine's answer.
 */
final class RouterSelectionFailure {
  private RouterSelectionFailure() {}

  /** The router's code for this answer, when it is the router's own "no worker" 503. */
  static Optional<String> code(EngineResponse response) {
    if (response.status() != 503) {
      return Optional.empty();
    }
    Optional<RouterErrorBody> error =
        RouterErrorBody.read(response).filter(e -> e.type().equals("Service Unavailable"));
    String code = error.map(RouterErrorBody::code).orElse("");
    String message = error.map(RouterErrorBody::message).orElse("");
    boolean selection =
        code.equals("server_selection_failed") && message.startsWith("No available servers: ");
    boolean noPrefill =
        code.equals("no_prefill_servers") && message.equals("No prefill servers available");
    return selection || noPrefill ? Optional.of(code) : Optional.empty();
  }

  /** Why the proof is inconclusive, and what to change. */
  static String reason(String path, String code) {
    return "POST "
        + path
        + " answered HTTP 503 "
        + code
        + ": the router itself found no available prefill or decode worker, so no engine saw the"
        + " prompt. A router with Kubernetes service discovery adds a pod only once it is Ready, and"
        + " the readiness gate keeps the prefill and decode pods un-Ready until this proof passes:"
        + " prove through a dedicated proof router with spec.rejectionProbe.router.registerWorkers:"
        + " true (docs/rejection-probe.md, \"The router must reach pods whose gates are shut\"); on"
        + " a proof router, a worker kvguard added was no longer available (unhealthy, or its"
        + " circuit open)";
  }
}
