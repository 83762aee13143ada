package io.kvguard.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testkit.EmbeddedApiServer;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the mock API server lacks for a real kubectl: discovery documents, and the server-side
 * Tables kubectl prints from (without them it falls back to NAME and AGE). Tables are built from
 * the demo's latest snapshot (at most one poll interval old); requests with selectors or watches
 * are left to the mock, unchanged.
 */
final class KubectlTables {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern MODEL_DEPLOYMENTS =
      Pattern.compile(
          "^/apis/kvguard\\.io/v1alpha1(?:/namespaces/([^/]+))?/modeldeployments(?:/([^/]+))?$");
  private static final Pattern PODS =
      Pattern.compile("^/api/v1(?:/namespaces/([^/]+))?/pods(?:/([^/]+))?$");
  private static final Pattern EVENTS =
      Pattern.compile("^/api/v1(?:/namespaces/([^/]+))?/events(?:/([^/]+))?$");
  private static final Pattern EQUALITY =
      Pattern.compile("^([A-Za-z0-9./_-]+)==?([A-Za-z0-9._-]*)$");
  private static final String VERBS =
      "[\"create\",\"delete\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]";
  private static final Map<String, String> DISCOVERY =
      Map.of(
          "/api",
              """
          {"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}""",
          "/apis",
              """
          {"kind":"APIGroupList","apiVersion":"v1","groups":[
           {"name":"kvguard.io","versions":[{"groupVersion":"kvguard.io/v1alpha1","version":"v1alpha1"}],
            "preferredVersion":{"groupVersion":"kvguard.io/v1alpha1","version":"v1alpha1"}},
           {"name":"apiextensions.k8s.io","versions":[{"groupVersion":"apiextensions.k8s.io/v1","version":"v1"}],
            "preferredVersion":{"groupVersion":"apiextensions.k8s.io/v1","version":"v1"}}]}""",
          "/api/v1",
              """
          {"kind":"APIResourceList","groupVersion":"v1","resources":[
           {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","shortNames":["po"],"verbs":%1$s},
           {"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]},
           {"name":"events","singularName":"event","namespaced":true,"kind":"Event","shortNames":["ev"],"verbs":%1$s},
           {"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","shortNames":["ns"],"verbs":%1$s}]}"""
                  .formatted(VERBS),
          "/apis/kvguard.io/v1alpha1",
              """
          {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"kvguard.io/v1alpha1","resources":[
           {"name":"modeldeployments","singularName":"modeldeployment","namespaced":true,"kind":"ModelDeployment","shortNames":["mdep"],"verbs":%1$s},
           {"name":"modeldeployments/status","singularName":"","namespaced":true,"kind":"ModelDeployment","verbs":["get","patch","update"]}]}"""
                  .formatted(VERBS),
          "/apis/apiextensions.k8s.io/v1",
              """
          {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apiextensions.k8s.io/v1","resources":[
           {"name":"customresourcedefinitions","singularName":"customresourcedefinition","namespaced":false,"kind":"CustomResourceDefinition","shortNames":["crd","crds"],"verbs":%1$s}]}"""
                  .formatted(VERBS));

  private final Supplier<ClusterSnapshot> latest;
  private final PrinterColumns columns;
  private final KubernetesSerialization serialization;
  private final Comparator<Event> eventOrder;

  KubectlTables(
      Supplier<ClusterSnapshot> latest,
      PrinterColumns columns,
      KubernetesSerialization serialization,
      Comparator<Event> eventOrder) {
    this.latest = latest;
    this.columns = columns;
    this.serialization = serialization;
    this.eventOrder = eventOrder;
  }

  void install(EmbeddedApiServer api) {
    api.faults(this::answer);
  }

  /** The answer kubectl needs, or null to let the mock answer as it always does. */
  MockResponse answer(RecordedRequest request) {
    if (!"GET".equals(request.getMethod())) {
      return null;
    }
    String path = request.getPath();
    int question = path.indexOf('?');
    String bare = question < 0 ? path : path.substring(0, question);
    String query = question < 0 ? "" : path.substring(question + 1);
    String discovery = DISCOVERY.get(bare);
    if (discovery != null) {
      return json(200, discovery);
    }
    String accept = request.getHeader("Accept");
    boolean table = accept != null && accept.contains("as=Table");
    Optional<Map<String, String>> labels = equalityLabels(query);
    if (!table
        || query.contains("watch=")
        || query.contains("fieldSelector=")
        || labels.isEmpty()) {
      return null;
    }
    ClusterSnapshot snapshot = latest.get();
    Matcher md = MODEL_DEPLOYMENTS.matcher(bare);
    if (md.matches()) {
      return table(
          select(snapshot.modelDeployments(), md).stream()
              .filter(m -> matches(m, labels.get()))
              .toList(),
          md,
          this::modelDeploymentTable,
          snapshot.at());
    }
    Matcher pod = PODS.matcher(bare);
    if (pod.matches()) {
      List<Pod> pods =
          select(snapshot.pods(), pod).stream().filter(p -> matches(p, labels.get())).toList();
      return table(pods, pod, KubectlTables::podTable, snapshot.at());
    }
    Matcher event = EVENTS.matcher(bare);
    if (event.matches()) {
      List<Event> events = new ArrayList<>(select(snapshot.events(), event));
      events.sort(eventOrder);
      return table(events, event, KubectlTables::eventTable, snapshot.at());
    }
    return null;
  }

  /**
   * The label selector when it is a plain list of {@code key=value} terms (what {@code kubectl -l
   * a=b} sends); empty for anything richer, which is left to the mock.
   */
  static Optional<Map<String, String>> equalityLabels(String query) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String parameter : query.split("&")) {
      if (!parameter.startsWith("labelSelector=")) {
        continue;
      }
      String selector =
          URLDecoder.decode(parameter.substring("labelSelector=".length()), StandardCharsets.UTF_8);
      for (String term : selector.split(",")) {
        Matcher equality = EQUALITY.matcher(term.strip());
        if (!equality.matches()) {
          return Optional.empty();
        }
        labels.put(equality.group(1), equality.group(2));
      }
    }
    return Optional.of(labels);
  }

  private static boolean matches(HasMetadata object, Map<String, String> labels) {
    Map<String, String> actual =
        object.getMetadata().getLabels() == null ? Map.of() : object.getMetadata().getLabels();
    return labels.entrySet().stream().allMatch(e -> e.getValue().equals(actual.get(e.getKey())));
  }

  private static <T extends HasMetadata> List<T> select(List<T> all, Matcher path) {
    String namespace = path.group(1);
    String name = path.group(2);
    return all.stream()
        .filter(o -> namespace == null || namespace.equals(o.getMetadata().getNamespace()))
        .filter(o -> name == null || name.equals(o.getMetadata().getName()))
        .toList();
  }

  /** Column definitions and one row per object. */
  private record Rows(ArrayNode columns, List<List<Object>> cells) {}

  /**
   * A Table, or null (the mock answers 404) when one named object was asked for and does not exist.
   */
  private <T extends HasMetadata> MockResponse table(
      List<T> objects,
      Matcher path,
      java.util.function.BiFunction<List<T>, Instant, Rows> rows,
      Instant now) {
    if (path.group(2) != null && objects.isEmpty()) {
      return null;
    }
    Rows built = rows.apply(objects, now);
    ObjectNode body =
        JSON.createObjectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
    body.putObject("metadata");
    body.set("columnDefinitions", built.columns());
    ArrayNode rowNodes = body.putArray("rows");
    for (int i = 0; i < objects.size(); i++) {
      ObjectNode row = rowNodes.addObject();
      row.set("cells", JSON.valueToTree(built.cells().get(i)));
      ObjectNode object =
          row.putObject("object")
              .put("kind", "PartialObjectMetadata")
              .put("apiVersion", "meta.k8s.io/v1");
      object.set(
          "metadata",
          JSON.valueToTree(
              serialization.convertValue(objects.get(i).getMetadata(), JsonNode.class)));
    }
    return json(200, body.toString());
  }

  private Rows modelDeploymentTable(List<ModelDeployment> mds, Instant now) {
    ArrayNode defs = JSON.createArrayNode();
    column(defs, "Name", "string", "name", 0);
    columns
        .columns()
        .forEach(
            c ->
                column(
                    defs,
                    c.getName(),
                    "date".equals(c.getType()) ? "string" : c.getType(),
                    "",
                    c.getPriority() == null ? 0 : c.getPriority()));
    List<List<Object>> cells = new ArrayList<>();
    for (ModelDeployment md : mds) {
      cells.add(new ArrayList<>(columns.row(serialization.convertValue(md, JsonNode.class), now)));
    }
    return new Rows(defs, cells);
  }

  private static Rows podTable(List<Pod> pods, Instant now) {
    ArrayNode defs = JSON.createArrayNode();
    column(defs, "Name", "string", "name", 0);
    textColumns(defs, 0, "Ready", "Status", "Restarts", "Age");
    textColumns(defs, 1, "IP", "Readiness Gates");
    List<List<Object>> cells = new ArrayList<>();
    for (Pod pod : pods) {
      List<ContainerStatus> statuses =
          pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null
              ? List.of()
              : pod.getStatus().getContainerStatuses();
      long ready = statuses.stream().filter(s -> Boolean.TRUE.equals(s.getReady())).count();
      int restarts =
          statuses.stream()
              .mapToInt(s -> s.getRestartCount() == null ? 0 : s.getRestartCount())
              .sum();
      int gates =
          pod.getSpec().getReadinessGates() == null ? 0 : pod.getSpec().getReadinessGates().size();
      boolean gateOpen =
          ClusterSnapshot.gate(pod).filter(c -> "True".equals(c.getStatus())).isPresent();
      cells.add(
          List.of(
              pod.getMetadata().getName(),
              ready + "/" + pod.getSpec().getContainers().size(),
              pod.getStatus() == null || pod.getStatus().getPhase() == null
                  ? "Pending"
                  : pod.getStatus().getPhase(),
              Integer.toString(restarts),
              age(pod.getMetadata().getCreationTimestamp(), now),
              pod.getStatus() == null || pod.getStatus().getPodIP() == null
                  ? "<none>"
                  : pod.getStatus().getPodIP(),
              gates == 0 ? "<none>" : (gateOpen ? 1 : 0) + "/" + gates));
    }
    return new Rows(defs, cells);
  }

  /** Plain string columns, as kubectl's wide (priority 1) or default (0) output shows them. */
  private static void textColumns(ArrayNode defs, int priority, String... names) {
    for (String name : names) {
      column(defs, name, "string", "", priority);
    }
  }

  private static Rows eventTable(List<Event> events, Instant now) {
    ArrayNode defs = JSON.createArrayNode();
    textColumns(defs, 0, "Last Seen", "Type", "Reason", "Object", "Message");
    List<List<Object>> cells = new ArrayList<>();
    for (Event event : events) {
      String object =
          event.getInvolvedObject() == null
              ? ""
              : event.getInvolvedObject().getKind().toLowerCase(java.util.Locale.ROOT)
                  + "/"
                  + event.getInvolvedObject().getName();
      cells.add(
          List.of(
              age(event.getLastTimestamp(), now),
              event.getType(),
              event.getReason(),
              object,
              event.getMessage()));
    }
    return new Rows(defs, cells);
  }

  private static String age(String timestamp, Instant now) {
    if (timestamp == null) {
      return "<unknown>";
    }
    return PrinterColumns.age(Duration.between(Instant.parse(timestamp), now));
  }

  private static void column(
      ArrayNode defs, String name, String type, String format, int priority) {
    defs.addObject()
        .put("name", name)
        .put("type", type)
        .put("format", format)
        .put("description", "")
        .put("priority", priority);
  }

  private static MockResponse json(int code, String body) {
    return new MockResponse()
        .setResponseCode(code)
        .setHeader("Content-Type", "application/json")
        .setBody(body);
  }
}
