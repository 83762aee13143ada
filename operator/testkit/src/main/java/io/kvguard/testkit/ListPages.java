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
import java.util.List;
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
 * <p>Unlike a real server, later pages are cut from the store as it is then, not from the first
 * page's snapshot, and a token never expires.
 */
final class ListPages {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern LIMIT = Pattern.compile("[?&]limit=(\\d+)");
  private static final Pattern CONTINUE = Pattern.compile("[?&]continue=([^&]*)");
  private static final Comparator<JsonNode> KEY_ORDER =
      Comparator.comparing((JsonNode item) -> key(item));

  private ListPages() {}

  /** The page the request asks for; the response unchanged when it asks for no limit. */
  static MockResponse page(String method, String path, MockResponse whole) {
    Matcher limit = path == null ? null : LIMIT.matcher(path);
    if (!"GET".equals(method)
        || limit == null
        || !limit.find()
        || path.contains("watch=true")
        || whole.code() != 200) {
      return whole;
    }
    int max = Integer.parseInt(limit.group(1));
    if (max <= 0) {
      return whole;
    }
    try {
      JsonNode list = JSON.readTree(whole.getBody().getBytes());
      if (!(list instanceof ObjectNode listObject) || !(list.get("items") instanceof ArrayNode)) {
        return whole;
      }
      Matcher token = CONTINUE.matcher(path);
      String after = token.find() ? decode(token.group(1)) : null;
      List<JsonNode> items = new ArrayList<>();
      list.get("items").forEach(items::add);
      items.sort(KEY_ORDER);
      List<JsonNode> rest =
          after == null
              ? items
              : items.stream().filter(item -> key(item).compareTo(after) > 0).toList();
      List<JsonNode> page = rest.subList(0, Math.min(max, rest.size()));
      ArrayNode pageItems = JSON.createArrayNode();
      page.forEach(pageItems::add);
      listObject.set("items", pageItems);
      ObjectNode metadata =
          listObject.get("metadata") instanceof ObjectNode m ? m : listObject.putObject("metadata");
      if (rest.size() > page.size()) {
        metadata.put("continue", encode(key(page.get(page.size() - 1))));
        if (!path.contains("labelSelector=") && !path.contains("fieldSelector=")) {
          // A real server counts what is left only for a LIST without selectors (ListMeta).
          metadata.put("remainingItemCount", rest.size() - page.size());
        }
      } else {
        metadata.remove("continue");
        metadata.remove("remainingItemCount");
      }
      whole.setBody(JSON.writeValueAsBytes(listObject));
      return whole;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
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
    return new String(
        Base64.getUrlDecoder().decode(URLDecoder.decode(token, StandardCharsets.UTF_8)),
        StandardCharsets.UTF_8);
  }
}
