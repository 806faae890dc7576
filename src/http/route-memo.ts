import type { ListingRoute, StaticRoute } from './route-types.js';
import { Doorkeeper } from './doorkeeper.js';

/** A remembered decision: the file that answers, or the page to compute. */
export type RememberedRoute = StaticRoute | ListingRoute;

/**
 * What offer() did with a decision: `first`, its target's first time (not remembered); `again`,
 * its second (remembered now); `never`, one the memo does not keep (too long, too many pairs).
 */
export type Offered = 'first' | 'again' | 'never';

/** Most decisions kept; past it the memo starts afresh (a client cycling targets only makes misses). */
const MAX_ROUTES = 2048;
/**
 * Longer targets and Accept headers, and queries of more pairs, are not remembered: a client's
 * oddity, not worth keeping. With these bounds the memo holds a few MiB at most.
 */
const MAX_TARGET = 1024;
const MAX_ACCEPT = 512;
const MAX_PAIRS = 16;

/**
 * Routing decisions of GET and HEAD requests, remembered per site (a new site starts a new memo):
 * what decideRoute() decides from the method, the request target as received and the Accept header.
 * Keys are those three values themselves, in nested maps (method, then Accept, absent being its
 * own key, then target): no two requests share a key unless all three are equal.
 */
export class RouteMemo {
  private readonly byMethod = new Map<string, Map<string | undefined, Map<string, RememberedRoute>>>();
  private size = 0;
  private readonly once = new Doorkeeper();

  get(method: string, accept: string | undefined, target: string): RememberedRoute | undefined {
    return this.byMethod.get(method)?.get(accept)?.get(target);
  }

  /**
   * A decision just made: remembered the second time its target is offered. A target asked once
   * (a crawler's, a client's unique parameter) would only fill the memo, make it start afresh
   * sooner, dropping the decisions asked often, and leave its decision in the garbage
   * collector's old space: a flood of never-seen queries slowed the answers after it.
   */
  offer(method: string, accept: string | undefined, target: string, route: RememberedRoute): Offered {
    if (
      target.length > MAX_TARGET ||
      (accept?.length ?? 0) > MAX_ACCEPT ||
      (route.kind === 'listing' && route.pairs.length > MAX_PAIRS)
    )
      return 'never';
    if (!this.once.again(target)) return 'first';
    if (this.size >= MAX_ROUTES) {
      this.byMethod.clear();
      this.size = 0;
    }
    let byAccept = this.byMethod.get(method);
    if (!byAccept) this.byMethod.set(method, (byAccept = new Map()));
    let byTarget = byAccept.get(accept);
    if (!byTarget) byAccept.set(accept, (byTarget = new Map()));
    if (!byTarget.has(target)) this.size++;
    byTarget.set(target, route);
    return 'again';
  }
}
