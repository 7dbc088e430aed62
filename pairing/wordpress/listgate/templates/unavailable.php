<?php
/**
 * Shown when listings cannot be read and no cached copy exists.
 *
 * @package Listgate
 *
 * @var array $args Unused.
 */

defined( 'ABSPATH' ) || exit;
?>
<div class="listgate-unavailable" role="status"><?php esc_html_e( 'Listings are temporarily unavailable, please try again shortly.', 'listgate' ); ?></div>
