// A small client of the Listgate API written against the types generated
// from origin/openapi/openapi.json (gen/schema.d.ts, by openapi-typescript).
// `make openapi-client` generates them and type-checks this file with
// `tsc --noEmit`: a change to the document that breaks what a client like
// this one relies on (a renamed or removed field, path, parameter or
// status, a field that becomes nullable) fails the build.
import createClient from "openapi-fetch";
import type { components, paths } from "./gen/schema";

type Listing = components["schemas"]["Listing"];
type Tombstone = components["schemas"]["Tombstone"];

function isListing(x: Listing | Tombstone): x is Listing {
  return "headline" in x;
}

// priceText is what a listing card shows as its price.
export function priceText(l: Listing): string {
  if (l.sold && l.sold.amount !== null) {
    return `Sold $${l.sold.amount}`;
  }
  if (l.rent) {
    return l.rent.amount === null ? "Contact agent" : `$${l.rent.amount} ${l.rent.period}`;
  }
  return l.price?.display_text ?? "Contact agent";
}

export async function demo(baseUrl: string, key: string, site: string): Promise<void> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

  const page = await api.GET("/sites/{site}/listings", {
    params: { path: { site }, query: { per_page: 5, page: 1, status: ["current"], sort: "-modified" } },
  });
  if (page.error) {
    throw new Error(`${page.error.error.code}: ${page.error.error.message}`);
  }
  const { data, meta } = page.data;
  console.log(`${meta.total}${meta.total_exact ? "" : "+"} listings, page ${meta.page} of ${meta.total_pages}`);
  for (const item of data) {
    if (!isListing(item)) {
      console.log(`${item.listing_id} is ${item.status}`);
      continue;
    }
    const bedrooms: number | null = item.features.bedrooms;
    const agent = item.agents[0];
    const ref: number = item.listing_ref;
    console.log(ref, item.headline ?? "(no headline)", priceText(item), item.address.suburb,
      bedrooms, agent ? agent.name : "-", item.media.length, item.auction?.date ?? "");
  }

  const one = await api.GET("/sites/{site}/listings/{listing}", {
    params: { path: { site, listing: "1" } },
  });
  if (one.data) {
    const l: Listing = one.data;
    console.log(l.listing_id, l.modified_at, l.land?.area ?? null, l.building?.area ?? null);
  } else if (one.response.status === 404) {
    console.log("no listing 1");
  }

  const agents = await api.GET("/sites/{site}/agents", { params: { path: { site } } });
  for (const a of agents.data?.data ?? []) {
    console.log(a.agent_id, a.name, a.email ?? "");
  }

  const lead = await api.POST("/leads", {
    params: { header: { "Idempotency-Key": "demo-1" } },
    body: {
      name: "Ann Lee",
      email: "ann@example.com",
      message: "Is it still available?",
      type: "inquiry",
      priority: "hot",
      listing_ref: 1,
      metadata: { utm_source: "google", campaign_id: 12, first_visit: true, referrer: null },
    },
  });
  if (lead.error) {
    const e = lead.error.error;
    console.log(e.code, e.message, e.code === "VALIDATION_ERROR" ? e.details : {});
    return;
  }
  const created = lead.data;
  const id: number = created.lead_id;
  const duplicate: boolean = created.duplicate;
  console.log(id, created.status, duplicate, created.assigned_to ?? "unassigned");
}
