//===- ClusterParser.cpp - Parse link and cluster descriptions ------------===//
//
// FileParser's links (with 'base' overrides), node groups and clusters, and
// the references by which they name devices and links in other files.
//
//===----------------------------------------------------------------------===//
#include "hwdb/FileParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/YAMLParser.h"

#include <memory>

namespace yaml = llvm::yaml;

namespace perfc::hw::detail {

//===-- Links ------------------------------------------------------------===//

llvm::Expected<Link> FileParser::parseLink(yaml::Node *N, bool AllowBase) {
  static const KeySpec Keys[] = {
      {"name", false, "nvlink3"},
      {"kind", false, "nvlink"},
      {"description", false, "..."},
      {"bandwidth", false, "300 GB/s"},
      {"latency", false, "1 us"},
      {"efficiency", false, "0.8"},
      {"switch_reduction", false, "true"},
      {"sources", false, "[{url: https://..., gives: bandwidth}]"},
      {"base", false, "soc-shared-memory"},
  };
  llvm::ArrayRef<KeySpec> Accepted(Keys);
  if (!AllowBase)
    Accepted = Accepted.drop_back();
  Link L;
  llvm::StringMap<bool> Given;
  llvm::Optional<Link> Base;
  yaml::Node *SwitchReductionAt = nullptr;
  const llvm::StringRef Kinds[] = {"nvlink",     "nvswitch", "pcie",
                                   "infiniband", "ethernet", "shared_memory"};
  llvm::Error E = walkMapping(
      N, "link", Accepted,
      [&](llvm::StringRef Key, llvm::SMLoc, yaml::Node *V) -> llvm::Error {
        Given[Key] = true;
        if (Key == "name") {
          auto S = identifier(V, Key);
          if (!S)
            return S.takeError();
          L.Name = std::move(*S);
        } else if (Key == "kind") {
          auto S = text(V, Key, "nvlink");
          if (!S)
            return S.takeError();
          const auto *It = llvm::find(Kinds, *S);
          if (It == std::end(Kinds))
            return errorAt(V, llvm::formatv("unknown link kind '{0}'; {1}use "
                                            "one of {2}",
                                            *S, didYouMean(*S, Kinds),
                                            joined(Kinds)));
          L.Kind = static_cast<LinkKind>(It - std::begin(Kinds));
        } else if (Key == "description") {
          auto S = text(V, Key, "...");
          if (!S)
            return S.takeError();
          L.Description = std::move(*S);
        } else if (Key == "bandwidth") {
          auto M = quantity(V, Key, Quantity::Bandwidth);
          if (!M)
            return M.takeError();
          L.BandwidthBytesPerSecond = M->Value;
        } else if (Key == "latency") {
          auto M = quantity(V, Key, Quantity::Time);
          if (!M)
            return M.takeError();
          L.LatencySeconds = M->Value;
        } else if (Key == "efficiency") {
          auto F = fraction(V, Key);
          if (!F)
            return F.takeError();
          L.Efficiency = *F;
        } else if (Key == "switch_reduction") {
          auto F = flag(V, Key);
          if (!F)
            return F.takeError();
          L.SwitchReduction = *F;
          SwitchReductionAt = V;
        } else if (Key == "sources") {
          return parseSources(V, L.Sources);
        } else if (Key == "base") {
          auto B = linkRef(V, Key);
          if (!B)
            return B.takeError();
          Base = std::move(*B);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  // Only a switch reduces in the network; a base link's kind counts too.
  const auto CheckSwitch = [&](const Link &Result) -> llvm::Error {
    if (Result.SwitchReduction && Result.Kind != LinkKind::NvSwitch)
      return errorAt(SwitchReductionAt ? SwitchReductionAt : N,
                     llvm::formatv("'switch_reduction: true'{0} needs an "
                                   "NVSwitch (kind: nvswitch), not a link of "
                                   "kind '{1}'; {2}",
                                   SwitchReductionAt ? "" : " (from the base)",
                                   name(Result.Kind),
                                   SwitchReductionAt
                                       ? "remove the key"
                                       : "add 'switch_reduction: false'"));
    return llvm::Error::success();
  };
  if (!Base) {
    if (llvm::Error SE = CheckSwitch(L))
      return std::move(SE);
    for (llvm::StringRef Required :
         {"name", "kind", "bandwidth", "latency", "efficiency"})
      if (!Given.count(Required))
        return errorAt(
            N, llvm::formatv("link is missing the required key '{0}'; add "
                             "e.g. '{0}: {1}'{2}",
                             Required,
                             llvm::find_if(Keys,
                                           [&](const KeySpec &S) {
                                             return S.Name == Required;
                                           })
                                 ->Example,
                             AllowBase ? " (or 'base: NAME' to start from a "
                                         "bundled link)"
                                       : ""));
    return L;
  }
  // Start from the base and apply what this mapping overrides.
  Link Result = std::move(*Base);
  if (Given.count("name"))
    Result.Name = L.Name;
  if (Given.count("kind"))
    Result.Kind = L.Kind;
  if (Given.count("description"))
    Result.Description = L.Description;
  if (Given.count("bandwidth"))
    Result.BandwidthBytesPerSecond = L.BandwidthBytesPerSecond;
  if (Given.count("latency"))
    Result.LatencySeconds = L.LatencySeconds;
  if (Given.count("efficiency"))
    Result.Efficiency = L.Efficiency;
  if (Given.count("switch_reduction"))
    Result.SwitchReduction = L.SwitchReduction;
  if (llvm::Error SE = CheckSwitch(Result))
    return std::move(SE);
  if (Given.count("sources"))
    Result.Sources.insert(Result.Sources.begin(), L.Sources.begin(),
                          L.Sources.end());
  return Result;
}

//===-- Clusters ---------------------------------------------------------===//

llvm::Expected<std::shared_ptr<const Device>>
FileParser::deviceRef(yaml::Node *N, llvm::StringRef Key) {
  if (llvm::isa<yaml::MappingNode>(N)) {
    auto D = parseDevice(N);
    if (!D)
      return D.takeError();
    return std::make_shared<const Device>(std::move(*D));
  }
  llvm::SmallString<64> Storage;
  auto Ref = scalar(N, Key, "a100-sxm4-80gb", Storage);
  if (!Ref)
    return Ref.takeError();
  const std::string RefName = Ref->trim().str();
  auto Src = Ctx.resolve(RefName, From, EntryKind::Device);
  if (!Src)
    return errorAt(N, llvm::toString(Src.takeError()));
  if (auto It = Ctx.Devices.find(Src->Key); It != Ctx.Devices.end())
    return It->second;
  FileParser Sub(*Src, Ctx);
  auto P = Sub.parse(
      EntryKind::Device,
      llvm::formatv("the reference at {0}:{1}", From.DisplayName,
                    SM.getLineAndColumn(N->getSourceRange().Start).first)
          .str());
  if (!P)
    return P.takeError();
  Ctx.Devices[Src->Key] = P->Dev;
  return P->Dev;
}

llvm::Expected<Link> FileParser::linkRef(yaml::Node *N, llvm::StringRef Key) {
  if (llvm::isa<yaml::MappingNode>(N))
    return parseLink(N, /*AllowBase=*/Key != "base");
  llvm::SmallString<64> Storage;
  auto Ref = scalar(N, Key, "nvlink3", Storage);
  if (!Ref)
    return Ref.takeError();
  auto Src = Ctx.resolve(Ref->trim(), From, EntryKind::Link);
  if (!Src)
    return errorAt(N, llvm::toString(Src.takeError()));
  FileParser Sub(*Src, Ctx);
  auto P = Sub.parse(
      EntryKind::Link,
      llvm::formatv("the reference at {0}:{1}", From.DisplayName,
                    SM.getLineAndColumn(N->getSourceRange().Start).first)
          .str());
  if (!P)
    return P.takeError();
  return std::move(*P->TheLink);
}

llvm::Expected<NodeGroup> FileParser::parseGroup(yaml::Node *N) {
  static const KeySpec Keys[] = {
      {"name", false, "dgx"},
      {"count", false, "64"},
      {"device", false, "a100-sxm4-80gb"},
      {"devices_per_node", false, "8"},
      {"devices", false, "[{device: orin-gpu, count: 1}]"},
      {"intra_node_link", false, "nvswitch"},
      {"inter_node_link", false, "infiniband-hdr"},
      {"nics_per_node", false, "8"},
  };
  NodeGroup G;
  llvm::StringMap<llvm::SMLoc> Given;
  llvm::Optional<unsigned> PerNode;
  llvm::Error E = walkMapping(
      N, "node group", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc KeyLoc,
          yaml::Node *V) -> llvm::Error {
        Given[Key] = KeyLoc;
        if (Key == "name") {
          auto S = text(V, Key, "dgx");
          if (!S)
            return S.takeError();
          G.Name = std::move(*S);
        } else if (Key == "count" || Key == "devices_per_node" ||
                   Key == "nics_per_node") {
          auto C = count(V, Key, /*AllowZero=*/false);
          if (!C)
            return C.takeError();
          if (Key == "count")
            G.Count = *C;
          else if (Key == "nics_per_node")
            G.NicsPerNode = *C;
          else
            PerNode = *C;
        } else if (Key == "device") {
          if (Given.count("devices"))
            return errorAt(KeyLoc, "give either 'device' (with "
                                   "'devices_per_node') or 'devices', not "
                                   "both");
          auto D = deviceRef(V, Key);
          if (!D)
            return D.takeError();
          G.Devices.push_back({std::move(*D), 1});
        } else if (Key == "devices") {
          if (Given.count("device"))
            return errorAt(KeyLoc, "give either 'device' (with "
                                   "'devices_per_node') or 'devices', not "
                                   "both");
          if (llvm::Error E = expectSequence(V, Key, Keys[4].Example))
            return E;
          static const KeySpec ItemKeys[] = {
              {"device", true, "orin-gpu"},
              {"count", false, "2"},
          };
          if (llvm::Error E = forEachItem(V, [&](yaml::Node *Item) {
                NodeDevice ND;
                return walkMapping(Item, "node device", ItemKeys,
                                   [&](llvm::StringRef IKey, llvm::SMLoc,
                                       yaml::Node *IV) -> llvm::Error {
                                     if (IKey == "count") {
                                       auto C =
                                           count(IV, IKey, /*AllowZero=*/false);
                                       if (!C)
                                         return C.takeError();
                                       ND.Count = *C;
                                       if (ND.Dev)
                                         G.Devices.back().Count = *C;
                                       return llvm::Error::success();
                                     }
                                     auto D = deviceRef(IV, IKey);
                                     if (!D)
                                       return D.takeError();
                                     ND.Dev = std::move(*D);
                                     G.Devices.push_back(ND);
                                     return llvm::Error::success();
                                   });
              }))
            return E;
          if (Diag)
            return diagError();
          if (G.Devices.empty())
            return errorAt(V, "'devices' is empty; list at least one "
                              "'{device: NAME, count: N}'");
        } else {
          auto L = linkRef(V, Key);
          if (!L)
            return L.takeError();
          (Key == "intra_node_link" ? G.IntraNode : G.InterNode) =
              std::move(*L);
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  if (G.Devices.empty())
    return errorAt(N, "node group names no device; add 'device: NAME' (with "
                      "'devices_per_node: N') or a 'devices' list");
  if (PerNode) {
    if (!Given.count("device"))
      return errorAt(Given["devices_per_node"],
                     "'devices_per_node' goes with 'device'; with a "
                     "'devices' list give each entry a 'count'");
    G.Devices.front().Count = *PerNode;
  }
  if (G.devicesPerNode() > 1 && !G.IntraNode)
    return errorAt(N, llvm::formatv("a node holds {0} devices but no "
                                    "'intra_node_link' joins them; add e.g. "
                                    "'intra_node_link: nvswitch'",
                                    G.devicesPerNode()));
  if (G.InterNode && !G.NicsPerNode)
    return errorAt(Given["inter_node_link"],
                   "'inter_node_link' needs 'nics_per_node', the number of "
                   "ports each node has on it; add e.g. 'nics_per_node: 8'");
  if (!G.InterNode && G.NicsPerNode)
    return errorAt(Given["nics_per_node"],
                   "'nics_per_node' without 'inter_node_link'; add the link "
                   "or remove the count");
  return G;
}

llvm::Expected<Cluster> FileParser::parseCluster(yaml::Node *N) {
  static const KeySpec Keys[] = {
      {"name", true, "dgx-a100"},
      {"description", false, "..."},
      {"nodes", true, "[{count: 1, device: a100-sxm4-80gb, ...}]"},
      {"sources", false, "[{url: https://..., gives: topology}]"},
  };
  Cluster C;
  llvm::SMLoc NodesLoc;
  llvm::Error E = walkMapping(
      N, "cluster", Keys,
      [&](llvm::StringRef Key, llvm::SMLoc KeyLoc,
          yaml::Node *V) -> llvm::Error {
        if (Key == "name") {
          auto S = identifier(V, Key);
          if (!S)
            return S.takeError();
          C.Name = std::move(*S);
        } else if (Key == "description") {
          auto S = text(V, Key, "...");
          if (!S)
            return S.takeError();
          C.Description = std::move(*S);
        } else if (Key == "sources") {
          return parseSources(V, C.Sources);
        } else {
          NodesLoc = KeyLoc;
          if (llvm::Error E = expectSequence(V, Key, Keys[2].Example))
            return E;
          if (llvm::Error E =
                  forEachItem(V, [&](yaml::Node *Item) -> llvm::Error {
                    auto G = parseGroup(Item);
                    if (!G)
                      return G.takeError();
                    C.Groups.push_back(std::move(*G));
                    return llvm::Error::success();
                  }))
            return E;
          if (Diag)
            return diagError();
          if (C.Groups.empty())
            return errorAt(KeyLoc, "'nodes' is empty; a cluster has at least "
                                   "one node group");
        }
        return llvm::Error::success();
      });
  if (E)
    return E;
  // Devices in different nodes talk over the inter-node link.
  if (C.numNodes() > 1)
    for (const NodeGroup &G : C.Groups)
      if (!G.InterNode)
        return errorAt(NodesLoc,
                       llvm::formatv("the cluster has {0} nodes but a node "
                                     "group has no 'inter_node_link'; add "
                                     "e.g. 'inter_node_link: infiniband-hdr' "
                                     "and 'nics_per_node'",
                                     C.numNodes()));
  return C;
}

} // namespace perfc::hw::detail
