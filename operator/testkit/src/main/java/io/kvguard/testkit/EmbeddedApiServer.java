package io.kvguard.testkit;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.io.InputStream;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An in-process Kubernetes API server: fabric8's mock server in CRUD mode, with the gaps that
 * matter to kvguard closed. A JSON patch whose {@code test} fails gets 422 (the mock would throw
 * and never answer), a patch of {@code pods/<name>/status} keeps the metadata it writes as a real
 * server's status strategy does (the mock keeps only the status), JOSDK's SelfSubjectRulesReview is
 * allowed, a LIST with {@code limit} is answered in pages ({@link ListPages}), every request is
 * recorded (for RBAC and write counting), a fault hook can answer in the server's place (409, 429,
 * 500), and open watches can be dropped ({@link #closeWatches}).
 */
public final class EmbeddedApiServer implements AutoCloseable {

  /** One request as the server saw it, and when (System.nanoTime, for the gaps between retries). */
  public record Request(String method, String path, int status, String userAgent, long atNanos) {
    public Request(String method, String path, int status) {
      this(method, path, status, null, 0);
    }
  }

  private final KubernetesMockServer server;
  private final List<Request> requests = new ArrayList<>();
  private volatile Function<RecordedRequest, MockResponse> faults = request -> null;
  private final ListPages pages = new ListPages();

  /** The watch connections open now (server side), for {@link #closeWatches}. */
  private final Set<WebSocket> openWatches = ConcurrentHashMap.newKeySet();

  public EmbeddedApiServer() {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    KubernetesMixedDispatcher crud = new KubernetesMixedDispatcher(responses);
    Dispatcher guarded =
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            MockResponse response = faults.apply(request);
            if (response == null) {
              MockResponse later = pages.fromSnapshot(request.getMethod(), request.getPath());
              if (later != null) {
                record(request, later.code());
                return later;
              }
              try {
                response = crud.dispatch(asRealStatusStrategy(request));
              } catch (RuntimeException e) {
                // A real API server answers a failed JSON-patch test (or any rejected patch) with
                // 422.
                response =
                    new MockResponse()
                        .setResponseCode(422)
                        .setBody(
                            status(
                                422,
                                "Invalid",
                                "the patch could not be applied: " + e.getClass().getSimpleName()));
              }
            }
            response = pages.page(request.getMethod(), request.getPath(), response);
            record(request, response.code());
            if (response.getWebSocketListener() != null) {
              response.withWebSocketUpgrade(new Tracked(response.getWebSocketListener()));
            }
            return response;
          }
        };
    server =
        new KubernetesMockServer(new Context(), new MockWebServer(), responses, guarded, false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    server
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReturn(
            201,
            "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectRulesReview\","
                + "\"status\":{\"incomplete\":false,\"resourceRules\":[{\"verbs\":[\"*\"],"
                + "\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"]}],\"nonResourceRules\":[]}}")
        .always();
  }

  private static final Pattern POD_STATUS =
      Pattern.compile("^(/api/v1/namespaces/[^/]+/pods/[^/?]+)/status([?].*)?$");

  /**
   * A real API server applies a patch of pods/status to the whole pod and then resets only the
   * spec, the deletionTimestamp and the ownerReferences (kubernetes/kubernetes
   * pkg/registry/core/pod/strategy.go, podStatusStrategy.PrepareForUpdate): labels and annotations
   * written with the status persist. The mock applies such a patch and keeps only its status. So it
   * is sent to the pod itself, where the mock keeps both (pods have no status subresource of their
   * own in the mock); nothing here patches a pod's spec through its status.
   */
  private static RecordedRequest asRealStatusStrategy(RecordedRequest request) {
    Matcher podStatus = POD_STATUS.matcher(request.getPath());
    if (!"PATCH".equals(request.getMethod()) || !podStatus.matches()) {
      return request;
    }
    String path = podStatus.group(1) + (podStatus.group(2) == null ? "" : podStatus.group(2));
    return new RecordedRequest(
        request.getHttpVersion(), request.method(), path, request.getHeaders(), request.getBody());
  }

  private synchronized void record(RecordedRequest request, int status) {
    requests.add(
        new Request(
            request.getMethod(),
            request.getPath(),
            status,
            request.getHeader("User-Agent"),
            System.nanoTime()));
  }

  /** Requests seen so far (a copy). */
  public synchronized List<Request> requests() {
    return new ArrayList<>(requests);
  }

  public synchronized void clearRequests() {
    requests.clear();
  }

  /**
   * Closes the open watch connections whose request matches, as an API server that restarts (or a
   * load balancer in front of it) drops them; returns how many. The client sees its WATCH end and
   * opens another, which the fault hook may then refuse. The mock has no way to do this itself: its
   * CRUD dispatcher keeps each watch's socket to itself (fabric8 v7.5.2, kubernetes-server-mock
   * {@code WatchEventsListener}), so every WebSocket upgrade the dispatcher answers is wrapped to
   * note its socket while it is open.
   */
  public int closeWatches(Predicate<RecordedRequest> which) {
    int closed = 0;
    for (WebSocket socket : List.copyOf(openWatches)) {
      if (which.test(socket.request()) && socket.close(1000, "closed by the test")) {
        openWatches.remove(socket);
        closed++;
      }
    }
    return closed;
  }

  /**
   * Notes a WebSocket while it is open, and otherwise leaves everything to the listener it wraps.
   */
  private final class Tracked extends WebSocketListener {
    private final WebSocketListener inner;

    Tracked(WebSocketListener inner) {
      this.inner = inner;
    }

    @Override
    public void onBeforeAccept(WebSocket socket, Response response) {
      inner.onBeforeAccept(socket, response);
    }

    @Override
    public void onOpen(WebSocket socket, Response response) {
      openWatches.add(socket);
      inner.onOpen(socket, response);
    }

    @Override
    public void onMessage(WebSocket socket, String text) {
      inner.onMessage(socket, text);
    }

    @Override
    public void onMessage(WebSocket socket, io.fabric8.mockwebserver.http.ByteString bytes) {
      inner.onMessage(socket, bytes);
    }

    @Override
    public void onMessage(WebSocket socket, byte[] bytes) {
      inner.onMessage(socket, bytes);
    }

    @Override
    public void onClosing(WebSocket socket, int code, String reason) {
      inner.onClosing(socket, code, reason);
    }

    @Override
    public void onClosed(WebSocket socket, int code, String reason) {
      openWatches.remove(socket);
      inner.onClosed(socket, code, reason);
    }

    @Override
    public void onFailure(WebSocket socket, Throwable t, Response response) {
      openWatches.remove(socket);
      inner.onFailure(socket, t, response);
    }
  }

  /**
   * Answers a request in the server's place when the hook returns a response; null lets it through.
   */
  public void faults(Function<RecordedRequest, MockResponse> hook) {
    faults = hook == null ? request -> null : hook;
  }

  public NamespacedKubernetesClient client() {
    return server.createClient();
  }

  public String url() {
    return "http://" + server.getHostName() + ":" + server.getPort();
  }

  /** Applies the CRD exactly as the build generated it, as a user would with kubectl apply. */
  public void applyModelDeploymentCrd(NamespacedKubernetesClient client) {
    try (InputStream yaml =
        EmbeddedApiServer.class.getResourceAsStream(
            "/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")) {
      if (yaml == null) {
        throw new IllegalStateException(
            "the generated CRD is not on the classpath; build with mvn package");
      }
      CustomResourceDefinition crd =
          client.getKubernetesSerialization().unmarshal(yaml, CustomResourceDefinition.class);
      client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot read the generated CRD", e);
    }
  }

  public static String status(int code, String reason, String message) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\",\"code\":"
        + code
        + ",\"reason\":\""
        + reason
        + "\",\"message\":\""
        + message.replace("\"", "'")
        + "\"}";
  }

  @Override
  public void close() {
    server.destroy();
  }
}
