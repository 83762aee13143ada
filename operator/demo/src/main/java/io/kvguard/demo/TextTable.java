package io.kvguard.demo;

import java.util.ArrayList;
import java.util.List;

/** Columns padded to their widest cell and separated by three spaces, as kubectl prints them. */
final class TextTable {
  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  TextTable(String... headers) {
    this.headers = List.of(headers);
  }

  TextTable row(String... cells) {
    if (cells.length != headers.size()) {
      throw new IllegalArgumentException(
          "expected " + headers.size() + " cells, got " + cells.length);
    }
    rows.add(List.of(cells));
    return this;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  String render(String indent) {
    int[] widths = new int[headers.size()];
    List<List<String>> all = new ArrayList<>();
    all.add(headers);
    all.addAll(rows);
    for (List<String> row : all) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    StringBuilder text = new StringBuilder();
    for (List<String> row : all) {
      StringBuilder line = new StringBuilder(indent);
      for (int i = 0; i < row.size(); i++) {
        line.append(row.get(i));
        if (i < row.size() - 1) {
          line.append(" ".repeat(widths[i] - row.get(i).length() + 3));
        }
      }
      text.append(line.toString().stripTrailing()).append(System.lineSeparator());
    }
    return text.toString();
  }
}
