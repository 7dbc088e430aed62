<?php
/**
 * A short message instead of listings: nothing matches, or the listing is gone.
 *
 * @package Listgate
 *
 * @var array $args "message": plain text; "back_url" (optional): a link back to the listings.
 */

defined( 'ABSPATH' ) || exit;
?>
<div class="listgate-empty">
	<p><?php echo esc_html( $args['message'] ); ?></p>
	<?php if ( ! empty( $args['back_url'] ) ) : ?>
		<p><a class="listgate-back" href="<?php echo esc_url( $args['back_url'] ); ?>"><?php esc_html_e( '← Back to listings', 'listgate' ); ?></a></p>
	<?php endif; ?>
</div>
