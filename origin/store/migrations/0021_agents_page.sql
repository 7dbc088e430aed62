-- A site's agents page in O(page): the agents of a page come from an index
-- in the page's order (lower(name), id), where every agent of the site was
-- read and sorted for each page; and each agent's listing refs come from
-- the index alone (listing_agents_agent_refs replaces listing_agents_agent,
-- adding the ref), where each of its listing_agents rows was read from the
-- table to count its current listings.
CREATE INDEX agents_site_lower_name ON agents (site_id, lower(name), id);
CREATE INDEX listing_agents_agent_refs ON listing_agents (site_id, agent_id) INCLUDE (listing_ref);
DROP INDEX listing_agents_agent;
