<?php
/**
 * One listing in a grid.
 *
 * @package Listgate
 *
 * @var array $args "listing" (the listing), "url" (its single view).
 */

defined( 'ABSPATH' ) || exit;

$listgate_listing   = $args['listing'];
$listgate_image     = Listgate_Format::first_image( $listgate_listing );
$listgate_title     = Listgate_Format::title( $listgate_listing );
$listgate_address   = Listgate_Format::address( $listgate_listing );
$listgate_suburb    = Listgate_Format::suburb( $listgate_listing );
$listgate_price     = Listgate_Format::price( $listgate_listing );
$listgate_bedrooms  = Listgate_Format::feature( $listgate_listing, 'bedrooms' );
$listgate_bathrooms = Listgate_Format::feature( $listgate_listing, 'bathrooms' );
$listgate_cars      = Listgate_Format::feature( $listgate_listing, 'car_spaces' );
?>
<article class="listgate-card" data-listing-ref="<?php echo esc_attr( (string) Listgate_Format::ref( $listgate_listing ) ); ?>">
	<a class="listgate-card-image" href="<?php echo esc_url( $args['url'] ); ?>" tabindex="-1" aria-hidden="true">
		<?php if ( '' !== $listgate_image ) : ?>
			<img src="<?php echo esc_url( $listgate_image ); ?>" alt="" loading="lazy" decoding="async">
		<?php else : ?>
			<span class="listgate-card-noimage"></span>
		<?php endif; ?>
	</a>
	<div class="listgate-card-body">
		<h3 class="listgate-card-title"><a class="listgate-card-link" href="<?php echo esc_url( $args['url'] ); ?>"><?php echo esc_html( $listgate_title ); ?></a></h3>
		<?php if ( '' !== $listgate_address && $listgate_address !== $listgate_title ) : ?>
			<p class="listgate-card-address"><?php echo esc_html( $listgate_address ); ?></p>
		<?php endif; ?>
		<?php if ( '' !== $listgate_suburb ) : ?>
			<p class="listgate-card-suburb"><?php echo esc_html( $listgate_suburb ); ?></p>
		<?php endif; ?>
		<?php if ( '' !== $listgate_price ) : ?>
			<p class="listgate-card-price"><?php echo esc_html( $listgate_price ); ?></p>
		<?php endif; ?>
		<ul class="listgate-card-features">
			<?php if ( null !== $listgate_bedrooms ) : ?>
				<li class="listgate-bedrooms">
					<?php
					/* translators: %d: number of bedrooms. */
					echo esc_html( sprintf( _n( '%d bed', '%d beds', $listgate_bedrooms, 'listgate' ), $listgate_bedrooms ) );
					?>
				</li>
			<?php endif; ?>
			<?php if ( null !== $listgate_bathrooms ) : ?>
				<li class="listgate-bathrooms">
					<?php
					/* translators: %d: number of bathrooms. */
					echo esc_html( sprintf( _n( '%d bath', '%d baths', $listgate_bathrooms, 'listgate' ), $listgate_bathrooms ) );
					?>
				</li>
			<?php endif; ?>
			<?php if ( null !== $listgate_cars && $listgate_cars > 0 ) : ?>
				<li class="listgate-car-spaces">
					<?php
					/* translators: %d: number of car spaces. */
					echo esc_html( sprintf( _n( '%d car', '%d cars', $listgate_cars, 'listgate' ), $listgate_cars ) );
					?>
				</li>
			<?php endif; ?>
		</ul>
	</div>
</article>
