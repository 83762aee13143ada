package io.kvguard.cli;

import io.kvguard.customresource.SecretKeyRef;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * {@code --api-key-file}: the bearer token check sends to the engine, read from a file because a
 * value on the command line shows in {@code ps} and in shell history. No message ever quotes what
 * the file holds.
 */
record ApiKeyFile(Path file, String key) {
  /** More than any API key: a larger file is the wrong file, and is not read whole. */
  static final int MAX_BYTES = 16 * 1024;

  private static final String BYTE_ORDER_MARK = "\uFEFF";

  /** A Secret's name: a DNS subdomain (Kubernetes' IsDNS1123Subdomain). */
  private static final Pattern SECRET_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /** A namespace: a DNS label (Kubernetes' IsDNS1123Label). */
  private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  /** A key of a Secret's data (Kubernetes' IsConfigMapKey). */
  private static final Pattern SECRET_KEY = Pattern.compile("[-._a-zA-Z0-9]+");

  static ApiKeyFile read(String name) throws UsageException {
    Path file = Path.of(name);
    String where = "--api-key-file " + name;
    if (Files.isDirectory(file)) {
      throw new UsageException(where + " is a directory, not a file holding the engine's API key");
    }
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file)) {
      bytes = in.readNBytes(MAX_BYTES + 1);
    } catch (NoSuchFileException e) {
      throw new UsageException(where + ": no such file");
    } catch (AccessDeniedException e) {
      throw new UsageException(where + " cannot be read: permission denied");
    } catch (IOException e) {
      throw new UsageException(where + " cannot be read (" + e.getClass().getSimpleName() + ")");
    }
    if (bytes.length > MAX_BYTES) {
      throw new UsageException(
          where + " is larger than " + MAX_BYTES + " bytes: that is no API key file");
    }
    // `echo KEY > file` and editors end the file with a line break, and Windows editors may begin
    // it with a byte order mark; the key holds neither.
    String key = new String(bytes, StandardCharsets.UTF_8).stripTrailing();
    if (key.startsWith(BYTE_ORDER_MARK)) {
      key = key.substring(BYTE_ORDER_MARK.length());
    }
    if (key.isEmpty()) {
      throw new UsageException(where + " is empty: it must hold the engine's API key");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        throw new UsageException(
            where
                + ": character "
                + (i + 1)
                + " of the key is a space, a line break, a control or a non-ASCII character,"
                + " which an Authorization header cannot carry; the file must hold the key alone");
      }
    }
    return new ApiKeyFile(file, key);
  }

  /**
   * What a user of {@code --model-deployment} runs to write the key the operator sends into a file
   * only they can read.
   */
  static String kubectlCommand(SecretKeyRef ref, String namespace, String where)
      throws UsageException {
    // The command is printed for the user to paste into a shell, and a ModelDeployment file is
    // read here unchecked by any API server: only names Kubernetes accepts (none of them holds a
    // quote, a space or a shell character) are written into it.
    requireName(
        ref.getName(), SECRET_NAME, 253, where, "probe.authSecretRef.name", "a Secret name");
    requireName(
        ref.effectiveKey(), SECRET_KEY, 253, where, "probe.authSecretRef.key", "a Secret key");
    if (namespace != null && !namespace.isBlank()) {
      requireName(namespace, NAMESPACE, 63, where, "metadata.namespace", "a namespace");
    }
    String key = ref.effectiveKey().replace(".", "\\.");
    return "(umask 077; kubectl"
        + (namespace == null || namespace.isBlank() ? "" : " -n " + namespace)
        + " get secret "
        + ref.getName()
        + " -o jsonpath='{.data."
        + key
        + "}' | base64 -d > api-key)";
  }

  private static void requireName(
      String value, Pattern pattern, int maxLength, String where, String field, String what)
      throws UsageException {
    if (value == null || value.length() > maxLength || !pattern.matcher(value).matches()) {
      throw new UsageException(
          where
              + ": "
              + field
              + " is not "
              + what
              + " Kubernetes accepts, so no cluster holds that key; correct the file");
    }
  }

  @Override
  public String toString() {
    // The key must never reach a message through a record's default toString.
    return "ApiKeyFile[" + file + "]";
  }
}
