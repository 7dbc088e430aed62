<?php
/**
 * The pages of the grid. Links keep the filters and carry lg_page.
 *
 * @package Listgate
 *
 * @var array $args "pages" (each "number" (0 for a gap), "url", "current"),
 *                  "prev" and "next" (URLs, "" for none), "page", "total".
 */

defined( 'ABSPATH' ) || exit;

if ( empty( $args['pages'] ) ) {
	return;
}
?>
<nav class="listgate-pagination" aria-label="<?php esc_attr_e( 'Listing pages', 'listgate' ); ?>">
	<?php if ( '' !== $args['prev'] ) : ?>
		<a class="listgate-page listgate-page-prev" rel="prev" href="<?php echo esc_url( $args['prev'] ); ?>"><?php esc_html_e( '‹ Previous', 'listgate' ); ?></a>
	<?php endif; ?>
	<?php foreach ( $args['pages'] as $listgate_page ) : ?>
		<?php if ( 0 === $listgate_page['number'] ) : ?>
			<span class="listgate-page-gap">…</span>
		<?php elseif ( $listgate_page['current'] ) : ?>
			<span class="listgate-page listgate-page-current" aria-current="page"><?php echo esc_html( number_format_i18n( $listgate_page['number'] ) ); ?></span>
		<?php else : ?>
			<a class="listgate-page" href="<?php echo esc_url( $listgate_page['url'] ); ?>"><?php echo esc_html( number_format_i18n( $listgate_page['number'] ) ); ?></a>
		<?php endif; ?>
	<?php endforeach; ?>
	<?php if ( '' !== $args['next'] ) : ?>
		<a class="listgate-page listgate-page-next" rel="next" href="<?php echo esc_url( $args['next'] ); ?>"><?php esc_html_e( 'Next ›', 'listgate' ); ?></a>
	<?php endif; ?>
</nav>
