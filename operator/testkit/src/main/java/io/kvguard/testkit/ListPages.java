package io.kvguard.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.http.MockResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pages a LIST as a real API server does when the client asks for {@code limit}: at most that many
 * items, in key order (namespace, then name: etcd's key order, {@code /registry/pods/<ns>/<name>}),
 * and a {@code metadata.continue} token for the rest (kubernetes {@code
 * staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go} {@code GetList}, {@code
 * apimachinery/pkg/apis/meta/v1/types.go} {@code ListMeta.Continue}). fabric8's mock answers every
 * item in one response whatever the limit, so a client that relies on pages (kvguard's pod
 * informers list 500 at a time) would be measured parsing one page of every pod of a namespace.
 *
 * <p>Later pages come from the first page's snapshot, as on a real server (a continue token reads
 * the store at the first page's resourceVersion, store.go {@code GetList}): a page is answered from
 * what the first one left, without asking the mock for the whole list again. Before, every page
 * cost the embedded server the whole list written, read back and sorted, which a real server never
 * spends, and a paged client was measured against that (issue 28 §5). A token this server did not
 * hand out, or one whose snapshot was dropped (it keeps the last {@link #SNAPSHOTS}), is cut from
 * the store as it is now; a token never expires.
 */
final class ListPages {
  static final int SNAPSHOTS = 16;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern LIMIT = Pattern.compile("[?&]limit=(\\d+)");
  private static final Pattern CONTINUE = Pattern.compile("[?&]continue=([^&]*)");
  private static final Comparator<JsonNode> KEY_ORDER =
      Comparator.comparing((JsonNode item) -> key(item));

  /** What a page left for the next: the list as first answered, and the items still to come. */
  private record Snapshot(ObjectNode list, List<JsonNode> rest) {}

  // By the LIST's path without its continue token, then the token.
  private final Map<String, Snapshot> snapshots =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Snapshot> eldest) {
          return size() > SNAPSHOTS;
        }
      };

  /**
   * The page a continue request asks for, from the snapshot its token was handed out with; null
   * when there is none (then the mock answers and {@link #page} cuts its answer).
   */
  synchronized MockResponse fromSnapshot(String method, String path) {
    Request request = Request.of(method, path);
    if (request == null || request.after() == null) {
      return null;
    }
    Snapshot snapshot = snapshots.remove(request.snapshotKey());
    if (snapshot == null) {
      return null;
    }
    return new MockResponse()
        .setResponseCode(200)
        .setHeader("Content-Type", "application/json")
        .setBody(answer(request, snapshot.list().deepCopy(), snapshot.rest()));
  }

  /** The page the request asks for; the response unchanged when it asks for no limit. */
  synchronized MockResponse page(String method, String path, MockResponse whole) {
    Request request = Request.of(method, path);
    if (request == null || whole.code() != 200) {
      return whole;
    }
    try {
      JsonNode list = JSON.readTree(whole.getBody().getBytes());
      if (!(list instanceof ObjectNode listObject) || !(list.get("items") instanceof ArrayNode)) {
        return whole;
      }
      List<JsonNode> items = new ArrayList<>();
      list.get("items").forEach(items::add);
      items.sort(KEY_ORDER);
      String after = request.after();
      List<JsonNode> rest =
          after == null
              ? items
              : items.stream().filter(item -> key(item).compareTo(after) > 0).toList();
      whole.setBody(answer(request, listObject, rest));
      return whole;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The first {@code limit} of {@code rest} in {@code list}, keeping the others for the next page.
   */
  private String answer(Request request, ObjectNode list, List<JsonNode> rest) {
    List<JsonNode> page = rest.subList(0, Math.min(request.limit(), rest.size()));
    ArrayNode pageItems = JSON.createArrayNode();
    page.forEach(pageItems::add);
    ObjectNode template = list.deepCopy().without("items");
    list.set("items", pageItems);
    ObjectNode metadata =
        list.get("metadata") instanceof ObjectNode m ? m : list.putObject("metadata");
    if (rest.size() > page.size()) {
      String token = encode(key(page.get(page.size() - 1)));
      metadata.put("continue", token);
      if (!request.path().contains("labelSelector=")
          && !request.path().contains("fieldSelector=")) {
        // A real server counts what is left only for a LIST without selectors (ListMeta).
        metadata.put("remainingItemCount", rest.size() - page.size());
      }
      snapshots.put(
          request.snapshotKey(token),
          new Snapshot(template, List.copyOf(rest.subList(page.size(), rest.size()))));
    } else {
      metadata.remove("continue");
      metadata.remove("remainingItemCount");
    }
    try {
      return JSON.writeValueAsString(list);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A paged LIST: its path, its limit, and the key its continue token resumes after. */
  private record Request(String path, int limit, String token, String after) {
    static Request of(String method, String path) {
      Matcher limit = path == null ? null : LIMIT.matcher(path);
      if (!"GET".equals(method) || limit == null || !limit.find() || path.contains("watch=true")) {
        return null;
      }
      int max = Integer.parseInt(limit.group(1));
      if (max <= 0) {
        return null;
      }
      Matcher token = CONTINUE.matcher(path);
      String raw = token.find() ? URLDecoder.decode(token.group(1), StandardCharsets.UTF_8) : null;
      return new Request(path, max, raw, raw == null ? null : decode(raw));
    }

    /** The LIST without its token: the same query, whichever page. */
    private String query() {
      return CONTINUE.matcher(path).replaceAll("").replaceFirst("^([^?]*)&", "$1?");
    }

    String snapshotKey() {
      return snapshotKey(token);
    }

    String snapshotKey(String handedOut) {
      return query() + " " + handedOut;
    }
  }

  private static String key(JsonNode item) {
    JsonNode metadata = item.path("metadata");
    return metadata.path("namespace").asText("") + "/" + metadata.path("name").asText("");
  }

  private static String encode(String key) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(key.getBytes(StandardCharsets.UTF_8));
  }

  private static String decode(String token) {
    return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
  }
}
