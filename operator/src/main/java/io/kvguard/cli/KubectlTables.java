package io.kvguard.cli;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kvguard.demo.EmbeddedApiServer;
import java.util.Map;

final class KubectlTables {
  private static final Map<String, String> DISCOVERY = Map.of(
      "/api", """
          {"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}""",
      "/apis", """
          {"kind":"APIGroupList","apiVersion":"v1","groups":[
           {"name":"kvguard.io","versions":[{"groupVersion":"kvguard.io/v1alpha1","version":"v1alpha1"}],
            "preferredVersion":{"groupVersion":"kvguard.io/v1alpha1","version":"v1alpha1"}},
           {"name":"apiextensions.k8s.io","versions":[{"groupVersion":"apiextensions.k8s.io/v1","version":"v1"}],
            "preferredVersion":{"groupVersion":"apiextensions.k8s.io/v1","version":"v1"}}]}""",
      "/api/v1", """
          {"kind":"APIResourceList","groupVersion":"v1","resources":[
           {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","shortNames":["po"],"verbs":["create","delete","get","list","patch","update","watch"]},
           {"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]},
           {"name":"events","singularName":"event","namespaced":true,"kind":"Event","shortNames":["ev"],"verbs":["create","delete","get","list","patch","update","watch"]},
           {"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","shortNames":["ns"],"verbs":["create","delete","get","list","patch","update","watch"]}]}""",
      "/apis/kvguard.io/v1alpha1", """
          {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"kvguard.io/v1alpha1","resources":[
           {"name":"modeldeployments","singularName":"modeldeployment","namespaced":true,"kind":"ModelDeployment","shortNames":["mdep"],"verbs":["create","delete","get","list","patch","update","watch"]},
           {"name":"modeldeployments/status","singularName":"","namespaced":true,"kind":"ModelDeployment","verbs":["get","patch","update"]}]}""",
      "/apis/apiextensions.k8s.io/v1", """
          {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apiextensions.k8s.io/v1","resources":[
           {"name":"customresourcedefinitions","singularName":"customresourcedefinition","namespaced":false,"kind":"CustomResourceDefinition","shortNames":["crd","crds"],"verbs":["create","delete","get","list","patch","update","watch"]}]}""");

  private KubectlTables() {}

  static void serve(EmbeddedApiServer api, PrinterColumns columns, KubernetesSerialization serialization) {
    api.faults(request -> answer(request));
  }

  static MockResponse answer(RecordedRequest request) {
    String path = request.getPath();
    int query = path.indexOf('?');
    String bare = query < 0 ? path : path.substring(0, query);
    String discovery = "GET".equals(request.getMethod()) ? DISCOVERY.get(bare) : null;
    if (discovery != null) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(discovery);
    }
    return null;
  }
}
