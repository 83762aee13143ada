package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Adds prefill and decode pods to a dedicated proof router for one proof and removes them again,
 * through sgl-model-gateway's worker API (spec.rejectionProbe.router.registerWorkers; issue 26 §2).
 * Read in sgl-project/sglang v0.5.18 (through bytedance-iaas/sglang), {@code
 * sgl-model-gateway/src}:
 *
 * <ul>
 *   <li>{@code POST /workers}, {@code GET /workers}, {@code GET|DELETE /workers/{worker_id}}
 *       ({@code server.rs:633-638}), behind the router's {@code --api-key} when it has one ({@code
 *       server.rs:641-654}, {@code middleware.rs:114-144}: 401 otherwise).
 *   <li>The body is {@code WorkerConfigRequest} (crate openai-protocol 1.0.0, lightseekorg/smg
 *       5ddd447ef {@code protocols/src/worker_spec.rs:20-102}): {@code url}, {@code worker_type}
 *       "prefill" or "decode", {@code bootstrap_port} for prefill, {@code api_key} the router uses
 *       towards the worker, {@code labels}.
 *   <li>Adding is queued: 202 with {@code worker_id} ({@code core/worker_service.rs:95-111,
 *       225-259}). The job checks the worker's {@code /health}, reads its metadata, registers it,
 *       and only then marks it healthy ({@code core/steps/worker/local/mod.rs:76-191}, {@code
 *       shared/activate.rs:25-27}); the PD router picks only available workers ({@code
 *       routers/http/pd_router.rs:1068-1079}). {@code GET /workers/{id}} shows the job while it
 *       runs and a failed job's {@code job_status} (kept 5 minutes), and once done the worker
 *       itself without a job status ({@code worker_service.rs:284-311}, {@code
 *       job_queue.rs:748-773}).
 *   <li>Removing is queued too (202, {@code worker_service.rs:314-336}); a removed worker's ID
 *       answers 404.
 * </ul>
 *
 * A router whose worker API answers without a key gets nothing: another tenant could add a worker
 * of its own to it during the proof ({@code openWorkerApi}).
 *
 * <p>Every worker kvguard adds carries the label {@value #LABEL} naming its ModelDeployment, so a
 * worker left behind by an earlier proof (an operator that stopped mid-proof) is removed before the
 * next; any other worker on the router makes the proof inconclusive, since a prompt could reach it.
 */
public final class RouterWorkers {
  /** The label on every worker kvguard adds: the ModelDeployment's namespace/name. */
  public static final String LABEL = "kvguard.io/proof-for";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long FIRST_POLL_MILLIS = 50;
  private static final long LAST_POLL_MILLIS = 500;

  /** The types of a registered worker ({@code core/worker.rs} {@code worker_to_info}). */
  private static final java.util.Set<String> WORKER_TYPES =
      java.util.Set.of("regular", "prefill", "decode");

  private final EngineHttp http;

  public RouterWorkers(EngineHttp http) {
    this.http = http;
  }

  /**
   * One pod to add.
   *
   * @param url where the router reaches the engine (the pod's own address)
   * @param type "prefill" or "decode"
   * @param apiKey the engines' token, for the router to send on to the worker
   */
  public record Wanted(
      String pod, String url, String type, OptionalLong bootstrapPort, Optional<String> apiKey) {}

  /**
   * What adding did: the IDs of the workers added (to remove whatever happens next), and why the
   * proof cannot be sent, if it cannot.
   *
   * @param unreachable the router did not answer, or not in time (tried again a period later)
   */
  public record Added(List<String> ids, Optional<String> problem, boolean unreachable) {}

  /**
   * Told what becomes of each pod asked for and each worker added, for a caller that reports it
   * worker by worker ({@code check --register-prefill/--register-decode}); the operator reports the
   * proof's outcome only.
   */
  public interface Journal {
    Journal NONE = new Journal() {};

    /** The router took the pod's registration and reserved this worker ID for it. */
    default void accepted(Wanted wanted, String id) {}

    /** The pod is on the router, of its type and healthy. */
    default void registered(Wanted wanted, String id) {}

    /** The pod could not be added (the router refused it, or its job failed), and why. */
    default void refused(Wanted wanted, String problem) {}

    /** The router has a worker at the pod's URL that was not added for this proof: not removed. */
    default void leftAlone(Wanted wanted, String id, String problem) {}

    /** The worker is gone from the router. */
    default void removed(String id) {}

    /** The worker could not be removed, and why. */
    default void notRemoved(String id, String problem) {}
  }

  /** Adds every pod and waits until the router may route to each; stops at the first problem. */
  public Added add(EngineEndpoint router, List<Wanted> wanted, String proofFor) {
    return add(router, wanted, proofFor, Journal.NONE);
  }

  /** {@link #add(EngineEndpoint, List, String)}, telling {@code journal} about each pod. */
  public Added add(EngineEndpoint router, List<Wanted> wanted, String proofFor, Journal journal) {
    List<String> ids = new ArrayList<>();
    JsonNode listed;
    try {
      EngineResponse open = http.get(router.withBearerToken(Optional.empty()), "/workers");
      if (open.status() == 200) {
        return refused(ids, openWorkerApi(router));
      }
      if (!routersOwnRefusal(open)) {
        return refused(ids, notTheRoutersRefusal(open));
      }
      EngineResponse response = http.get(router, "/workers");
      if (response.status() != 200) {
        return refused(ids, "GET /workers answered HTTP " + response.status() + fix(response));
      }
      listed = object(response).map(o -> o.get("workers")).orElse(null);
      if (listed == null || !listed.isArray()) {
        return refused(
            ids,
            "GET /workers did not answer sgl-model-gateway's worker list {\"workers\": [...]}");
      }
    } catch (ProbeException e) {
      return new Added(ids, Optional.of(e.getMessage()), true);
    }
    try {
      List<String> leftovers = new ArrayList<>();
      List<String> foreign = new ArrayList<>();
      for (JsonNode worker : listed) {
        String id = ErrorBodies.text(worker, "id").orElse("");
        boolean ours = labelledFor(worker, proofFor);
        (ours && !id.isEmpty() ? leftovers : foreign)
            .add(EngineText.safe(ErrorBodies.text(worker, "url").orElse("(no url)")));
        if (ours && !id.isEmpty()) {
          ids.add(id);
        }
      }
      if (!foreign.isEmpty()) {
        return refused(
            ids,
            "the proof router already lists "
                + foreign.size()
                + " worker(s) kvguard did not add for this ModelDeployment "
                + foreign
                + ", and a probe prompt could reach them; give the ModelDeployment a proof router of"
                + " its own, started in PD mode with no --prefill, --decode or --worker-urls and"
                + " without --service-discovery");
      }
      Optional<String> notRemoved = remove(router, ids);
      if (notRemoved.isPresent()) {
        return refused(ids, "a worker left by an earlier proof: " + notRemoved.get());
      }
      ids.clear();
      for (Wanted one : wanted) {
        EngineResponse response = http.postJson(router, "/workers", body(one, proofFor));
        Optional<String> id =
            object(response)
                .flatMap(o -> ErrorBodies.text(o, "worker_id"))
                .filter(RouterWorkers::isId);
        if (response.status() != 202 || id.isEmpty()) {
          String problem =
              "POST /workers for "
                  + one.type()
                  + " pod "
                  + one.pod()
                  + " answered HTTP "
                  + response.status()
                  + (response.status() == 202 ? " without a worker_id" : fix(response));
          journal.refused(one, problem);
          return refused(ids, problem);
        }
        ids.add(id.get());
        journal.accepted(one, id.get());
      }
      for (int i = 0; i < wanted.size(); i++) {
        Optional<String> problem =
            awaitRegistered(router, ids, i, wanted.get(i), proofFor, journal);
        if (problem.isPresent()) {
          return refused(ids, problem.get());
        }
      }
      return new Added(ids, Optional.empty(), false);
    } catch (ProbeException e) {
      // No answer in time (a job still running at the deadline, a router that stopped answering):
      // not the router's refusal, so tried again a period later rather than standing for the key.
      return new Added(List.copyOf(ids), Optional.of(e.getMessage()), true);
    }
  }

  /**
   * Removes the workers kvguard added and waits until the router no longer knows them; the problem
   * if it could not.
   */
  public Optional<String> remove(EngineEndpoint router, List<String> ids) {
    return remove(router, ids, Journal.NONE);
  }

  /**
   * {@link #remove(EngineEndpoint, List)}, telling {@code journal} which workers are gone and which
   * are not.
   */
  public Optional<String> remove(EngineEndpoint router, List<String> ids, Journal journal) {
    List<String> pending = new ArrayList<>(ids);
    try {
      for (String id : ids) {
        EngineResponse response = http.delete(router, path(id));
        if (response.status() != 202 && response.status() != 404) {
          String problem = "DELETE /workers/" + id + " answered HTTP " + response.status();
          pending.forEach(left -> journal.notRemoved(left, problem));
          return Optional.of(problem);
        }
      }
      for (String id : ids) {
        long wait = FIRST_POLL_MILLIS;
        while (!gone(http.get(router, path(id)))) {
          wait = pause(wait);
        }
        pending.remove(id);
        journal.removed(id);
      }
      return Optional.empty();
    } catch (ProbeException e) {
      pending.forEach(left -> journal.notRemoved(left, e.getMessage()));
      return Optional.of(e.getMessage());
    }
  }

  /**
   * Polls the worker until its job is done and the router marked it healthy. A registered worker at
   * that ID without this ModelDeployment's label is not kvguard's: the router hands out the ID of
   * the worker it already has at a URL ({@code core/worker_registry.rs:301-303}) and fails the job
   * ("Worker … already exists", {@code core/steps/worker/local/create_worker.rs:50-59}), as when
   * someone added the same pod between kvguard's listing and its POST. Its ID is then taken out of
   * {@code ids}, so it is not removed, and the proof is not sent.
   */
  private Optional<String> awaitRegistered(
      EngineEndpoint router,
      List<String> ids,
      int index,
      Wanted wanted,
      String proofFor,
      Journal journal)
      throws ProbeException {
    String id = ids.get(index);
    String who = wanted.type() + " pod " + wanted.pod() + " (worker " + id + ")";
    long wait = FIRST_POLL_MILLIS;
    while (true) {
      EngineResponse response = http.get(router, path(id));
      if (response.status() != 200) {
        String problem =
            "GET /workers/" + id + " for " + who + " answered HTTP " + response.status();
        journal.refused(wanted, problem);
        return Optional.of(problem);
      }
      JsonNode info = object(response).orElse(null);
      if (info != null && registered(info) && !labelledFor(info, proofFor)) {
        ids.remove(index);
        String problem =
            "the proof router already has a worker at "
                + wanted.url()
                + " for "
                + who
                + " that kvguard did not add for this ModelDeployment (added after kvguard listed"
                + " the router's workers); it is left alone. Give the ModelDeployment a proof router"
                + " of its own";
        journal.leftAlone(wanted, id, problem);
        return Optional.of(problem);
      }
      JsonNode job = info == null ? null : info.get("job_status");
      if (job != null && !job.isNull()) {
        if ("failed".equals(ErrorBodies.text(job, "status").orElse(""))) {
          String problem =
              "the router's job adding "
                  + who
                  + " failed (its job_status says why, and the router's log): the router must reach"
                  + " the pod's /health and /server_info at "
                  + wanted.url();
          journal.refused(wanted, problem);
          return Optional.of(problem);
        }
      } else if (info != null
          && wanted.type().equals(ErrorBodies.text(info, "worker_type").orElse(""))
          && info.path("is_healthy").asBoolean(false)) {
        journal.registered(wanted, id);
        return Optional.empty();
      }
      wait = pause(wait);
    }
  }

  /**
   * Whether the router no longer has the worker: 404, or the placeholder it shows for an ID whose
   * worker is not registered ({@code worker_service.rs:298-305}) with a failed removal: removing a
   * URL no worker is registered at fails ("Worker … not found", {@code
   * local/find_workers_to_remove.rs}), and the ID of a registration that failed stays reserved, so
   * it is not 404 until the failed job's status expires, five minutes later ({@code
   * job_queue.rs:777-791}).
   */
  private static boolean gone(EngineResponse response) {
    if (response.status() == 404) {
      return true;
    }
    JsonNode info = response.status() == 200 ? object(response).orElse(null) : null;
    JsonNode job = info == null ? null : info.get("job_status");
    return info != null
        && !registered(info)
        && job != null
        && "RemoveWorker".equals(ErrorBodies.text(job, "job_type").orElse(""))
        && "failed".equals(ErrorBodies.text(job, "status").orElse(""));
  }

  /**
   * Whether the answer is a registered worker's, not the placeholder of type "unknown" shown for an
   * ID whose worker is not registered (openai-protocol 1.0.0 {@code WorkerInfo::pending}).
   */
  private static boolean registered(JsonNode info) {
    return WORKER_TYPES.contains(ErrorBodies.text(info, "worker_type").orElse(""));
  }

  private static boolean labelledFor(JsonNode info, String proofFor) {
    return ErrorBodies.child(info, "metadata")
        .flatMap(m -> ErrorBodies.text(m, LABEL))
        .filter(proofFor::equals)
        .isPresent();
  }

  private static long pause(long millis) throws ProbeException {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ProbeException("interrupted while waiting for the proof router's worker jobs");
    }
    return Math.min(millis * 2, LAST_POLL_MILLIS);
  }

  private static byte[] body(Wanted one, String proofFor) {
    ObjectNode body = JSON.createObjectNode();
    body.put("url", one.url());
    body.put("worker_type", one.type());
    one.bootstrapPort().ifPresent(port -> body.put("bootstrap_port", port));
    one.apiKey().ifPresent(key -> body.put("api_key", key));
    body.putObject("labels").put(LABEL, proofFor);
    try {
      return JSON.writeValueAsBytes(body);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("an ObjectNode always serialises", e);
    }
  }

  /**
   * Why nothing is added to a router whose worker API answers without a key. sgl-model-gateway
   * v0.5.18 authenticates its worker routes only when started with {@code --api-key} ({@code
   * server.rs:632-655}, {@code middleware.rs:114-144}), so without one anyone who reaches the
   * router (another tenant's pod) can add a worker of their own during the proof: the router then
   * picks it for prompts, its answer standing for the pods' own refusal, and sends it the client's
   * {@code Authorization} header, the engines' token ({@code routers/http/pd_router.rs:1358-1378},
   * {@code routers/header_utils.rs:207-219}). Listing the workers again cannot close this: a worker
   * can be added and removed between two listings.
   */
  private static String openWorkerApi(EngineEndpoint router) {
    return "GET /workers without a key answered HTTP 200: the proof router's worker API is open to"
        + " anyone who reaches it (started without --api-key), so another tenant could add a worker"
        + " of its own during the proof, have the router pick it for the prompts (its answer would"
        + " stand for the pods' own refusal) and be sent the engines' token with them; start the"
        + " proof router with --api-key set to the engines' token"
        + (router.bearerToken().isPresent()
            ? ""
            : ", which kvguard sends it only when it has one (spec.probe.authSecretRef; check:"
                + " --api-key-file) and the pods are probed over plain HTTP");
  }

  /**
   * Whether an anonymous {@code GET /workers} was refused by sgl-model-gateway's {@code --api-key}
   * check, not by something in front of it: v0.5.18 answers 401 with no body ({@code
   * middleware.rs:114-144}, {@code Err(StatusCode::UNAUTHORIZED)}). A proxy on the Service's port
   * that turns anonymous requests away (an authorization policy's 403, a login page's 401) says
   * nothing about the router behind it, whose own port other tenants may still reach. Control-plane
   * authentication's 401 has a body (lightseekorg/smg 5ddd447ef, crate auth 1.0.0, {@code
   * auth/src/middleware.rs:232-247}) and is refused too: with it the worker routes take its
   * credentials, not {@code --api-key} ({@code server.rs:641-653}), and {@code /generate} may take
   * none.
   */
  private static boolean routersOwnRefusal(EngineResponse response) {
    return response.status() == 401 && response.length() == 0;
  }

  private static String notTheRoutersRefusal(EngineResponse response) {
    return "GET /workers without a key answered HTTP "
        + response.status()
        + (response.status() == 401 ? " with a body" : "")
        + ", not sgl-model-gateway's own --api-key refusal (401 with no body): something other"
        + " than the router's --api-key answered (a proxy in front of it, control-plane"
        + " authentication), which does not show that the router's worker API and /generate are"
        + " closed to whoever reaches the router's pods; start the proof router with --api-key set"
        + " to the engines' token, without control-plane authentication, and point the Service"
        + " straight at it";
  }

  private static Added refused(List<String> ids, String problem) {
    return new Added(List.copyOf(ids), Optional.of(problem), false);
  }

  private static String fix(EngineResponse response) {
    return switch (response.status()) {
      case 401, 403 ->
          " (the router wants its --api-key: it must be the engines' token"
              + " (spec.probe.authSecretRef), which kvguard sends over plain HTTP only)";
      case 404, 405 ->
          " (no worker API there: the Service must be sgl-model-gateway at a version with POST"
              + " /workers, v0.5.18 or a build with the same routes)";
      default -> "";
    };
  }

  /** The worker IDs sgl-model-gateway hands out are UUIDs ({@code worker_service.rs:209-216}). */
  private static boolean isId(String id) {
    return id.matches("[0-9a-fA-F-]{36}");
  }

  private static String path(String id) {
    return "/workers/" + URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  private static Optional<JsonNode> object(EngineResponse response) {
    return ErrorBodies.object(response);
  }
}
