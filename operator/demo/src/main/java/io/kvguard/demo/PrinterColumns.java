package io.kvguard.demo;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ModelDeployment columns exactly as the generated CRD declares them, evaluated the way the API
 * server does for {@code kubectl get mdep}: NAME first, then each additionalPrinterColumn in CRD
 * order. Supports the JSONPath subset the CRD uses: dotted fields and one {@code
 * [?(@.field=="value")]} filter.
 */
final class PrinterColumns {
  static final String CRD_RESOURCE = "/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml";
  private static final Pattern FILTER =
      Pattern.compile("^([^\\[]*)\\[\\?\\(@\\.([A-Za-z0-9_]+)==\"([^\"]*)\"\\)\\](.*)$");

  private final List<CustomResourceColumnDefinition> columns;

  PrinterColumns(List<CustomResourceColumnDefinition> columns) {
    this.columns = List.copyOf(columns);
  }

  static PrinterColumns fromGeneratedCrd(KubernetesSerialization serialization) {
    try (InputStream yaml = PrinterColumns.class.getResourceAsStream(CRD_RESOURCE)) {
      if (yaml == null) {
        throw new IllegalStateException(
            "the generated CRD is not on the classpath; build with mvn package");
      }
      CustomResourceDefinition crd = serialization.unmarshal(yaml, CustomResourceDefinition.class);
      CustomResourceDefinitionVersion served =
          crd.getSpec().getVersions().stream()
              .filter(v -> Boolean.TRUE.equals(v.getStorage()))
              .findFirst()
              .orElseThrow();
      List<CustomResourceColumnDefinition> columns =
          served.getAdditionalPrinterColumns() == null
              ? List.of()
              : served.getAdditionalPrinterColumns();
      return new PrinterColumns(
          columns.stream().filter(c -> c.getPriority() == null || c.getPriority() == 0).toList());
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the generated CRD", e);
    }
  }

  List<CustomResourceColumnDefinition> columns() {
    return columns;
  }

  List<String> headers() {
    List<String> headers = new ArrayList<>(List.of("NAME"));
    columns.forEach(c -> headers.add(c.getName().toUpperCase(java.util.Locale.ROOT)));
    return headers;
  }

  /**
   * One row as kubectl prints it: the name, then each column's value (dates as ages, missing as
   * empty).
   */
  List<String> row(JsonNode resource, Instant now) {
    List<String> row = new ArrayList<>(List.of(resource.path("metadata").path("name").asText()));
    for (CustomResourceColumnDefinition column : columns) {
      JsonNode value = evaluate(resource, column.getJsonPath());
      row.add(format(value, column.getType(), now));
    }
    return row;
  }

  static JsonNode evaluate(JsonNode root, String path) {
    Matcher filter = FILTER.matcher(path);
    if (filter.matches()) {
      JsonNode list = fields(root, filter.group(1));
      if (list == null || !list.isArray()) {
        return null;
      }
      for (JsonNode item : list) {
        if (filter.group(3).equals(item.path(filter.group(2)).asText(null))) {
          return fields(item, filter.group(4));
        }
      }
      return null;
    }
    return fields(root, path);
  }

  private static JsonNode fields(JsonNode node, String dotted) {
    JsonNode current = node;
    for (String field : dotted.split("\\.")) {
      if (field.isEmpty()) {
        continue;
      }
      if (current == null || !current.has(field)) {
        return null;
      }
      current = current.get(field);
    }
    return current;
  }

  private static String format(JsonNode value, String type, Instant now) {
    if (value == null || value.isNull() || value.isMissingNode()) {
      return "";
    }
    if ("date".equals(type)) {
      try {
        return age(Duration.between(Instant.parse(value.asText()), now));
      } catch (DateTimeParseException e) {
        return value.asText();
      }
    }
    return value.asText();
  }

  /** kubectl's short human durations: 45s, 3m20s, 2h5m, 4d. */
  static String age(Duration age) {
    long seconds = Math.max(0, age.getSeconds());
    if (seconds < 120) {
      return seconds + "s";
    }
    long minutes = seconds / 60;
    if (minutes < 10) {
      return minutes + "m" + (seconds % 60 == 0 ? "" : (seconds % 60) + "s");
    }
    if (minutes < 180) {
      return minutes + "m";
    }
    long hours = minutes / 60;
    if (hours < 8) {
      return hours + "h" + (minutes % 60 == 0 ? "" : (minutes % 60) + "m");
    }
    if (hours < 48) {
      return hours + "h";
    }
    return (hours / 24) + "d";
  }
}
