package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The generator sorts printer columns by JSON path, but {@code kubectl get mdep} must show them as
 * the API contract lists them. Applied by CrdPostProcessor.
 */
final class PrinterColumnOrder {
  static final List<String> ORDER =
      List.of("Model", "Window", "Verified", "Ready", "LabelOnly", "Age");

  private PrinterColumnOrder() {}

  /** Reorders one CRD version's additionalPrinterColumns in place. */
  static void apply(JsonNode version) {
    ArrayNode columns = (ArrayNode) version.get("additionalPrinterColumns");
    List<JsonNode> sorted = new ArrayList<>();
    columns.forEach(sorted::add);
    sorted.sort(
        Comparator.comparingInt(
            c -> {
              int at = ORDER.indexOf(c.path("name").asText());
              return at < 0 ? ORDER.size() : at;
            }));
    columns.removeAll();
    columns.addAll(sorted);
    ((ObjectNode) version).set("additionalPrinterColumns", columns);
  }
}
